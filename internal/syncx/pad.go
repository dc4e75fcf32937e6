package syncx

// CacheLine is the padding, in bytes, that keeps data written by different
// cores apart (false sharing): two 64-byte lines, since the adjacent-line
// prefetcher of x86 cores pairs them.
const CacheLine = 128

// Pad separates the fields before and after it by at least one CacheLine.
type Pad [CacheLine]byte

package nacos

// SDKClientsMade is how many nacos-sdk-go clients this process has made.
func SDKClientsMade() int64 { return sdkClientsMade.Load() }

// LockSDK holds the lock under which this package makes and closes
// nacos-sdk-go clients (see sdkLife), for a test that makes its own beside
// them: the SDK races otherwise.
func LockSDK() (unlock func()) { sdkLife.Lock(); return sdkLife.Unlock }

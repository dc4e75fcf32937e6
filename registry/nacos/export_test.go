package nacos

// SDKClientsMade is how many nacos-sdk-go clients this process has made.
func SDKClientsMade() int64 { return sdkClientsMade.Load() }

package grpcresolver

// The outlier_detection_experimental balancer registers itself only when
// grpc-go's xds package is imported. This import stays in this package, so
// that a service using the core consumer package does not pay for xDS.
import _ "google.golang.org/grpc/xds"

// Package outlierdetection turns on grpc-go's outlier detection for
// channels built with grpcresolver: imported for its side effect, it
// registers the outlier_detection_experimental balancer, which
// grpcresolver.ServiceConfig names first, so failing instances are ejected
// (an instance failing 50 % of at least 5 calls in a 1s interval is ejected
// for 5s times its ejection count, up to 5m, at most 50 % of the instances
// at once). Without this import grpcresolver's channels use round_robin
// with client-side health checking only.
//
//	import _ "github.com/drainkit/drainkit/consumer/grpcresolver/outlierdetection"
//
// The cost: grpc-go registers that balancer only from its xds package, so
// this import links xDS into the program (a plain grpc-go client grows
// from about 15 MB to about 40 MB, 313 to 504 packages) and registers xDS's
// resolvers, balancers and credentials globally. It is a module of its
// own so that programs that do not import it do not even download xDS.
package outlierdetection

import _ "google.golang.org/grpc/xds" // registers outlier_detection_experimental

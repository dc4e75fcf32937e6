module github.com/drainkit/drainkit

go 1.25.0

require (
	github.com/pelletier/go-toml/v2 v2.2.4
	github.com/spf13/pflag v1.1.0
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/net v0.58.0
	google.golang.org/grpc v1.84.0
)

require (
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260706201446-f0a921348800 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
)

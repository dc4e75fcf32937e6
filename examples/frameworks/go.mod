module github.com/drainkit/drainkit/examples/frameworks

go 1.26.7

require (
	github.com/drainkit/drainkit v0.0.0-00010101000000-000000000000
	github.com/drainkit/drainkit/consumer v0.0.0-00010101000000-000000000000
	github.com/drainkit/drainkit/consumer/grpcresolver v0.0.0-00010101000000-000000000000
	github.com/drainkit/drainkit/examples v0.0.0-00010101000000-000000000000
	github.com/drainkit/drainkit/grpcdrain v0.0.0-00010101000000-000000000000
	github.com/go-kratos/kratos/v2 v2.8.3
	github.com/spf13/pflag v1.1.0
	github.com/zeromicro/go-zero v1.10.3
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.85.0
)

require (
	dario.cat/mergo v1.0.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-kratos/aegis v0.2.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-playground/form/v4 v4.2.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/golang-jwt/jwt/v4 v4.5.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gorilla/mux v1.8.1 // indirect
	github.com/grafana/pyroscope-go v1.3.0 // indirect
	github.com/grafana/pyroscope-go/godeltaprof v0.1.10 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/openzipkin/zipkin-go v0.4.3 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/sagikazarmark/locafero v0.11.0 // indirect
	github.com/sourcegraph/conc v0.3.1-0.20240121214520-5f936abd7ae8 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	github.com/spf13/afero v1.15.0 // indirect
	github.com/spf13/cast v1.10.0 // indirect
	github.com/spf13/viper v1.21.0 // indirect
	github.com/subosito/gotenv v1.6.0 // indirect
	github.com/titanous/json5 v1.0.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/stdout/stdouttrace v1.40.0 // indirect
	go.opentelemetry.io/otel/exporters/zipkin v1.40.0 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.opentelemetry.io/proto/otlp v1.9.0 // indirect
	go.uber.org/automaxprocs v1.6.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

// The drainkit modules from this checkout (the placeholder version, as in
// the root's go.work, which this module is outside of: build with
// GOWORK=off).
replace (
	github.com/drainkit/drainkit v0.0.0-00010101000000-000000000000 => ../..
	github.com/drainkit/drainkit/consumer v0.0.0-00010101000000-000000000000 => ../../consumer
	github.com/drainkit/drainkit/consumer/grpcresolver v0.0.0-00010101000000-000000000000 => ../../consumer/grpcresolver
	github.com/drainkit/drainkit/consumer/grpcresolver/outlierdetection v0.0.0-00010101000000-000000000000 => ../../consumer/grpcresolver/outlierdetection
	github.com/drainkit/drainkit/examples v0.0.0-00010101000000-000000000000 => ..
	github.com/drainkit/drainkit/grpcdrain v0.0.0-00010101000000-000000000000 => ../../grpcdrain
	github.com/drainkit/drainkit/registry/consul v0.0.0-00010101000000-000000000000 => ../../registry/consul
	github.com/drainkit/drainkit/registry/etcd v0.0.0-00010101000000-000000000000 => ../../registry/etcd
	github.com/drainkit/drainkit/telemetry v0.0.0-00010101000000-000000000000 => ../../telemetry
)

// Package conf stands in for the package kratos-layout generates from
// internal/conf/conf.proto: the same types and fields (Bootstrap, Server
// with Http and Grpc, Data) as plain Go, so that the example builds without
// protoc. kratos's config.Scan fills it from the YAML file as it fills the
// generated one (encoding/json here, protojson there).
package conf

import (
	"encoding/json"
	"fmt"
	"time"
)

// Bootstrap is the whole configuration file.
type Bootstrap struct {
	Server *Server `json:"server"`
	Data   *Data   `json:"data"`
}

// Server is the file's server section: one listener per transport.
type Server struct {
	Http *Server_HTTP `json:"http"`
	Grpc *Server_GRPC `json:"grpc"`
}

// Server_HTTP is server.http: network, host:port address and timeout.
type Server_HTTP struct {
	Network string    `json:"network"`
	Addr    string    `json:"addr"`
	Timeout *Duration `json:"timeout"`
}

// Server_GRPC is server.grpc: network, host:port address and timeout.
type Server_GRPC struct {
	Network string    `json:"network"`
	Addr    string    `json:"addr"`
	Timeout *Duration `json:"timeout"`
}

// Data is the file's data section (the layout's database settings).
type Data struct {
	Database *Data_Database `json:"database"`
}

// Data_Database is data.database: the driver's name and its source.
type Data_Database struct {
	Driver string `json:"driver"`
	Source string `json:"source"`
}

// Duration stands in for the generated *durationpb.Duration: a Go duration
// string in the file ("1s"), AsDuration in the code.
type Duration struct{ d time.Duration }

// UnmarshalJSON parses a duration string such as "1s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"1s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.d = v
	return nil
}

// AsDuration returns the duration.
func (d *Duration) AsDuration() time.Duration { return d.d }

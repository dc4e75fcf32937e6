module github.com/drainkit/drainkit

go 1.26.7

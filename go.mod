module github.com/ctxkit/ctxkit

go 1.26.0

require (
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/text v0.44.0
)

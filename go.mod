module github.com/ctxkit/ctxkit

go 1.26.0

require (
	github.com/tiktoken-go/tokenizer v0.10.0
	golang.org/x/text v0.44.0
)

require github.com/dlclark/regexp2/v2 v2.5.1 // indirect

module github.com/ctxkit/ctxkit

go 1.26

module github.com/b2frame/b2frame-go

go 1.19

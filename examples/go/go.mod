module example

go 1.19

require github.com/b2frame/b2frame-go v0.0.0

replace github.com/b2frame/b2frame-go => ../../bindings/go

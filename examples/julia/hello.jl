# A frame from Julia: a cframe file of Int32 items, three chunks and a vlmetalayer, reopened and
# read across two chunks. Run against an installed b2frame:
#   B2FRAME_LIB=$PREFIX/lib/libb2frame.so julia --project=bindings/julia examples/julia/hello.jl
using B2frame
path = joinpath(mktempdir(), "data.b2frame")
f = Frame(path=path, typesize=4, codec=:zstd)
for c in 0:2
    append!(f, Int32.(c*1000 .+ (0:999)))
end
setvlmeta!(f, "unit", Vector{UInt8}("m"))
close(f)
g = Frame(path)
println(nchunks(g), " ", getslice(g, 998, 1002, Int32), " ", String(vlmeta(g, "unit")))
close(g)

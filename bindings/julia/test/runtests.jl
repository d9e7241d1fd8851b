using Test
using B2frame

const PY = get(ENV, "B2FRAME_PYTHON", joinpath(@__DIR__, "..", "..", "..", ".venv", "bin", "python"))

@testset "B2frame" begin
    @testset "memory round trip" begin
        f = Frame(typesize=4, codec=:zstd, filters=[:bitshuffle])
        addmeta!(f, "dims", UInt8[0x92, 0x10, 0x20])
        chunks = [Int32.(0:999), Int32.(5000:5999), Int32.(-7:992)]
        for c in chunks
            append!(f, c)
        end
        @test nchunks(f) == 3 && nbytes(f) == 12000 && chunksize(f) == 4000 && typesize(f) == 4
        @test readchunk(f, 1, Int32) == chunks[2]
        @test getslice(f, 998, 1003, Int32) == Int32[998, 999, 5000, 5001, 5002]
        setslice!(f, 998, Int32[1, 2, 3, 4, 5])
        @test getslice(f, 997, 1004, Int32) == Int32[997, 1, 2, 3, 4, 5, 5003]
        setvlmeta!(f, "attrs", Vector{UInt8}("first"))
        setvlmeta!(f, "attrs", Vector{UInt8}("second"))
        setvlmeta!(f, "other", UInt8[1])
        deletevlmeta!(f, "other")
        bytes = tobytes(f)
        @test bytes[3:10] == Vector{UInt8}("b2frame\0")
        g = Frame(bytes)
        @test readchunk(g, 2, Int32) == chunks[3]
        @test meta(g, "dims") == UInt8[0x92, 0x10, 0x20]
        @test vlmeta(g, "attrs") == Vector{UInt8}("second")
        @test vlmetanames(g) == ["attrs"]
        @test tobytes(g) == bytes
        close(f); close(g); close(g)
        @test !isopen(g)
    end

    @testset "files and mutations" begin
        dir = mktempdir()
        for contiguous in (true, false)
            path = joinpath(dir, contiguous ? "f.b2frame" : "s.b2sframe")
            f = Frame(path=path, contiguous=contiguous, typesize=4)
            for k in 0:2
                append!(f, Int32.(k*1000 .+ (0:499)))
            end
            @test insertchunk!(f, 1, compress(f, Int32.(9000:9499))) == 4
            updatechunk!(f, 3, compress(f, Int32.(-500:-1)))
            @test deletechunk!(f, 0) == 3
            close(f)
            g = Frame(path)
            @test [readchunk(g, i, Int32) for i in 0:2] == [Int32.(9000:9499), Int32.(1000:1499), Int32.(-500:-1)]
            close(g)
        end
    end

    @testset "errors" begin
        e = try Frame(joinpath(mktempdir(), "missing")); nothing catch err; err end
        @test e isa B2frameError && e.code == -15
        e = try Frame(rand(UInt8, 300)); nothing catch err; err end
        @test e isa B2frameError
        f = Frame(typesize=4)
        append!(f, Int32.(1:100))
        e = try readchunk(f, 5); nothing catch err; err end
        @test e isa B2frameError && e.code == -12 && !isempty(e.msg)
        @test_throws B2frameError meta(f, "nope")
        @test_throws B2frameError getslice(f, 90, 101)
        close(f)
        @test_throws B2frameError nchunks(f)
    end

    @testset "frame written by python-blosc2" begin
        if !isfile(PY)
            error("python-blosc2 reference missing: $PY (run scripts/setup-env.sh or set B2FRAME_PYTHON)")
        end
        path = joinpath(mktempdir(), "py.b2frame")
        run(`$PY -c "import sys, numpy as np, blosc2; s = blosc2.SChunk(chunksize=4000, data=np.arange(2500, dtype=np.int32), cparams={'typesize': 4}, urlpath=sys.argv[1], mode='w'); s.vlmeta['unit'] = 'm'" $path`)
        f = Frame(path)
        @test nchunks(f) == 3
        @test getslice(f, 0, 2500, Int32) == Int32.(0:2499)
        @test vlmeta(f, "unit") == UInt8[0xa1, UInt8('m')]
        close(f)
    end
end

"""
    B2frame

Blosc2 frames through libb2frame's super-chunk C API (the c-blosc2 3.3 ABI): create and open
frames (cframe files, sframe directories, bytes), append and read chunks, slices, insert /
update / delete, metalayers and vlmetalayers.

The library is `ENV["B2FRAME_LIB"]` when set at (pre)compile time, else `libb2frame` from the system
search path. (A registered package would take it from a `b2frame_jll` artifact instead.)
"""
module B2frame

export Frame, B2frameError, nchunks, nbytes, cbytes, typesize, chunksize, readchunk, getslice,
       setslice!, insertchunk!, updatechunk!, deletechunk!, compress, meta, setmeta!, addmeta!,
       vlmeta, setvlmeta!, deletevlmeta!, vlmetanames, tobytes

const libb2frame = get(ENV, "B2FRAME_LIB", "libb2frame")

"""A failure reported by libb2frame: the `BLOSC2_ERROR_*` code and `blosc2_error_string`."""
struct B2frameError <: Exception
    op::String
    code::Int
    msg::String
end
B2frameError(op::AbstractString, code::Integer) = B2frameError(op, code,
    unsafe_string(@ccall libb2frame.blosc2_error_string(code::Cint)::Cstring))
Base.showerror(io::IO, e::B2frameError) = print(io, "B2frameError: ", e.op, ": ", e.msg, " (", e.code, ")")

check(op, rc) = rc < 0 ? throw(B2frameError(op, rc)) : rc

# blosc2_cparams / blosc2_dparams / blosc2_storage, field for field (include/blosc2.h).
struct CParams
    compcode::UInt8
    compcode_meta::UInt8
    clevel::UInt8
    use_dict::Cint
    typesize::Int32
    nthreads::Int16
    blocksize::Int32
    splitmode::Int32
    schunk::Ptr{Cvoid}
    filters::NTuple{6,UInt8}
    filters_meta::NTuple{6,UInt8}
    prefilter::Ptr{Cvoid}
    preparams::Ptr{Cvoid}
    tuner_params::Ptr{Cvoid}
    tuner_id::Cint
    instr_codec::Bool
    codec_params::Ptr{Cvoid}
    filter_params::NTuple{6,Ptr{Cvoid}}
end

struct DParams
    nthreads::Int16
    schunk::Ptr{Cvoid}
    postfilter::Ptr{Cvoid}
    postparams::Ptr{Cvoid}
    typesize::Int32
end

struct Storage
    contiguous::Bool
    urlpath::Cstring
    cparams::Ptr{CParams}
    dparams::Ptr{DParams}
    io::Ptr{Cvoid}
end

# Byte offsets of blosc2_schunk's counters (x86-64 / aarch64 LP64 layout).
const OFF_TYPESIZE = 8
const OFF_CHUNKSIZE = 16
const OFF_NCHUNKS = 40
const OFF_NBYTES = 56
const OFF_CBYTES = 64
const OFF_CCTX = 104

"""
    Frame

An open super-chunk. `close(f)` frees it; a finalizer does so for frames never closed.
"""
mutable struct Frame
    ptr::Ptr{Cvoid}
    function Frame(ptr::Ptr{Cvoid}, op::AbstractString)
        ptr == C_NULL && throw(B2frameError(op, -1, "cannot create or open the frame"))
        f = new(ptr)
        finalizer(close, f)
    end
end

function handle(f::Frame)
    f.ptr == C_NULL && throw(B2frameError("frame", -32, "frame is closed"))
    f.ptr
end

function Base.close(f::Frame)
    if f.ptr != C_NULL
        p, f.ptr = f.ptr, C_NULL
        @ccall libb2frame.blosc2_schunk_free(p::Ptr{Cvoid})::Cint
    end
    nothing
end
Base.isopen(f::Frame) = f.ptr != C_NULL
# Passing `f::Ptr{Cvoid}` to @ccall roots `f` for the call, so its finalizer cannot run mid-call.
Base.unsafe_convert(::Type{Ptr{Cvoid}}, f::Frame) = handle(f)

const CODECS = Dict(:blosclz => 0, :lz4 => 1, :lz4hc => 2, :zlib => 4, :zstd => 5)
const FILTERS = Dict(:nofilter => 0, :shuffle => 1, :bitshuffle => 2, :delta => 3, :trunc_prec => 4)

"""
    Frame(; path=nothing, contiguous=true, codec=:blosclz, clevel=5, typesize=8, filters=[:shuffle])

A new empty frame: in memory when `path` is nothing, else a cframe file (`contiguous=true`) or
an sframe directory.
"""
function Frame(; path::Union{Nothing,AbstractString}=nothing, contiguous::Bool=true,
               codec::Symbol=:blosclz, clevel::Integer=5, typesize::Integer=8,
               filters::AbstractVector{Symbol}=[:shuffle])
    length(filters) <= 6 || throw(ArgumentError("at most 6 filters"))
    d = @ccall libb2frame.blosc2_get_blosc2_cparams_defaults()::CParams
    fl = zeros(UInt8, 6)
    fl[7-length(filters):6] .= [FILTERS[x] for x in filters]
    cp = Ref(CParams(CODECS[codec], 0, clevel, 0, typesize, d.nthreads, 0, d.splitmode, C_NULL,
                     Tuple(fl), ntuple(_ -> 0x00, 6), C_NULL, C_NULL, C_NULL, 0, false, C_NULL,
                     ntuple(_ -> C_NULL, 6)))
    dp = Ref(@ccall libb2frame.blosc2_get_blosc2_dparams_defaults()::DParams)
    spath = path === nothing ? nothing : String(path)
    p = GC.@preserve cp dp spath begin
        cpath = spath === nothing ? reinterpret(Cstring, C_NULL) : Base.unsafe_convert(Cstring, spath)
        st = Ref(Storage(contiguous, cpath, Base.unsafe_convert(Ptr{CParams}, cp),
                         Base.unsafe_convert(Ptr{DParams}, dp), C_NULL))
        @ccall libb2frame.blosc2_schunk_new(st::Ptr{Storage})::Ptr{Cvoid}
    end
    Frame(p, "blosc2_schunk_new")
end

"""Open a frame file or sframe directory (`offset`: a cframe inside a larger file)."""
function Frame(path::AbstractString; offset::Integer=0)
    ispath(path) || throw(B2frameError("open($(repr(path)))", -15, "no such file or directory"))
    p = @ccall libb2frame.blosc2_schunk_open_offset(path::Cstring, offset::Int64)::Ptr{Cvoid}
    Frame(p, "blosc2_schunk_open_offset($(repr(path)))")
end

"""Open an in-memory cframe (the bytes are copied)."""
function Frame(bytes::Vector{UInt8})
    isempty(bytes) && throw(B2frameError("blosc2_schunk_from_buffer", -5))
    p = @ccall libb2frame.blosc2_schunk_from_buffer(bytes::Ptr{UInt8}, length(bytes)::Int64, true::Bool)::Ptr{Cvoid}
    Frame(p, "blosc2_schunk_from_buffer")
end

field(f::Frame, T, off) = GC.@preserve f unsafe_load(Ptr{T}(handle(f) + off))
nchunks(f::Frame) = field(f, Int64, OFF_NCHUNKS)
nbytes(f::Frame) = field(f, Int64, OFF_NBYTES)
cbytes(f::Frame) = field(f, Int64, OFF_CBYTES)
typesize(f::Frame) = Int(field(f, Int32, OFF_TYPESIZE))
chunksize(f::Frame) = Int(field(f, Int32, OFF_CHUNKSIZE))
Base.length(f::Frame) = Int(nchunks(f))

"""Append `data` (bytes or an array of bits types) as one compressed chunk; returns nchunks."""
function Base.append!(f::Frame, data::AbstractArray)
    a = Vector{UInt8}(reinterpret(UInt8, vec(collect(data))))
    check("blosc2_schunk_append_buffer",
          @ccall libb2frame.blosc2_schunk_append_buffer(f::Ptr{Cvoid}, a::Ptr{UInt8}, length(a)::Int32)::Int64)
end

"""The compressed bytes of chunk `i` (0-based, like the C API)."""
function rawchunk(f::Frame, i::Integer)
    p = Ref{Ptr{UInt8}}(C_NULL)
    nf = Ref{Bool}(false)
    n = check("blosc2_schunk_get_chunk",
              @ccall libb2frame.blosc2_schunk_get_chunk(f::Ptr{Cvoid}, i::Int64, p::Ptr{Ptr{UInt8}}, nf::Ptr{Bool})::Cint)
    out = copy(unsafe_wrap(Array, p[], n))
    nf[] && Libc.free(p[])
    out
end

"""Chunk `i` (0-based) decompressed, as bytes or reinterpreted as `T`."""
function readchunk(f::Frame, i::Integer, ::Type{T}=UInt8) where {T}
    raw = rawchunk(f, i)
    nb, cb, bs = Ref{Int32}(0), Ref{Int32}(0), Ref{Int32}(0)
    check("blosc2_cbuffer_sizes", @ccall libb2frame.blosc2_cbuffer_sizes(raw::Ptr{UInt8}, nb::Ptr{Int32}, cb::Ptr{Int32}, bs::Ptr{Int32})::Cint)
    out = Vector{UInt8}(undef, nb[])
    n = check("blosc2_schunk_decompress_chunk",
              @ccall libb2frame.blosc2_schunk_decompress_chunk(f::Ptr{Cvoid}, i::Int64, out::Ptr{UInt8}, nb[]::Int32)::Cint)
    T === UInt8 ? resize!(out, n) : collect(reinterpret(T, resize!(out, n)))
end

"""Items `start:stop-1` (0-based item indices, units of typesize) as bytes or `T`."""
function getslice(f::Frame, start::Integer, stop::Integer, ::Type{T}=UInt8) where {T}
    ts = typesize(f)
    (0 <= start <= stop && stop * ts <= nbytes(f)) || throw(B2frameError("getslice", -12))
    out = Vector{UInt8}(undef, (stop - start) * ts)
    isempty(out) || check("blosc2_schunk_get_slice_buffer",
        @ccall libb2frame.blosc2_schunk_get_slice_buffer(f::Ptr{Cvoid}, start::Int64, stop::Int64, out::Ptr{UInt8})::Cint)
    T === UInt8 ? out : collect(reinterpret(T, out))
end

"""Overwrite items from `start` (0-based) with `data`."""
function setslice!(f::Frame, start::Integer, data::AbstractArray)
    a = Vector{UInt8}(reinterpret(UInt8, vec(collect(data))))
    ts = typesize(f)
    length(a) % ts == 0 || throw(B2frameError("setslice!", -12))
    stop = start + length(a) ÷ ts
    (0 <= start && stop * ts <= nbytes(f)) || throw(B2frameError("setslice!", -12))
    check("blosc2_schunk_set_slice_buffer",
          @ccall libb2frame.blosc2_schunk_set_slice_buffer(f::Ptr{Cvoid}, start::Int64, stop::Int64, a::Ptr{UInt8})::Cint)
    f
end

"""Compress `data` into a chunk with the frame's parameters (for insertchunk!/updatechunk!)."""
function compress(f::Frame, data::AbstractArray)
    a = Vector{UInt8}(reinterpret(UInt8, vec(collect(data))))
    out = Vector{UInt8}(undef, length(a) + 32)
    n = GC.@preserve f begin
        cctx = unsafe_load(Ptr{Ptr{Cvoid}}(handle(f) + OFF_CCTX))
        check("blosc2_compress_ctx",
              @ccall libb2frame.blosc2_compress_ctx(cctx::Ptr{Cvoid}, a::Ptr{UInt8}, length(a)::Int32, out::Ptr{UInt8}, length(out)::Int32)::Cint)
    end
    resize!(out, n)
end

function chunkcheck(op, chunk::Vector{UInt8})
    length(chunk) >= 16 || throw(B2frameError(op, -5))
    nb, cb, bs = Ref{Int32}(0), Ref{Int32}(0), Ref{Int32}(0)
    check(op, @ccall libb2frame.blosc2_cbuffer_sizes(chunk::Ptr{UInt8}, nb::Ptr{Int32}, cb::Ptr{Int32}, bs::Ptr{Int32})::Cint)
    cb[] <= length(chunk) || throw(B2frameError(op, -5))
end

insertchunk!(f::Frame, i::Integer, chunk::Vector{UInt8}) = (chunkcheck("blosc2_schunk_insert_chunk", chunk);
    check("blosc2_schunk_insert_chunk", @ccall libb2frame.blosc2_schunk_insert_chunk(f::Ptr{Cvoid}, i::Int64, chunk::Ptr{UInt8}, true::Bool)::Int64))
updatechunk!(f::Frame, i::Integer, chunk::Vector{UInt8}) = (chunkcheck("blosc2_schunk_update_chunk", chunk);
    check("blosc2_schunk_update_chunk", @ccall libb2frame.blosc2_schunk_update_chunk(f::Ptr{Cvoid}, i::Int64, chunk::Ptr{UInt8}, true::Bool)::Int64))
deletechunk!(f::Frame, i::Integer) =
    check("blosc2_schunk_delete_chunk", @ccall libb2frame.blosc2_schunk_delete_chunk(f::Ptr{Cvoid}, i::Int64)::Int64)

"""The frame as contiguous cframe bytes."""
function tobytes(f::Frame)
    p = Ref{Ptr{UInt8}}(C_NULL)
    nf = Ref{Bool}(false)
    n = check("blosc2_schunk_to_buffer",
              @ccall libb2frame.blosc2_schunk_to_buffer(f::Ptr{Cvoid}, p::Ptr{Ptr{UInt8}}, nf::Ptr{Bool})::Int64)
    out = copy(unsafe_wrap(Array, p[], n))
    nf[] && Libc.free(p[])
    out
end

addmeta!(f::Frame, name::AbstractString, content::Vector{UInt8}) =
    check("blosc2_meta_add", @ccall libb2frame.blosc2_meta_add(f::Ptr{Cvoid}, name::Cstring, content::Ptr{UInt8}, length(content)::Int32)::Cint)
setmeta!(f::Frame, name::AbstractString, content::Vector{UInt8}) =
    check("blosc2_meta_update", @ccall libb2frame.blosc2_meta_update(f::Ptr{Cvoid}, name::Cstring, content::Ptr{UInt8}, length(content)::Int32)::Cint)

# blosc2_meta_get is a header-inline function: read schunk->metalayers directly.
const OFF_METALAYERS = 120
const OFF_NMETALAYERS = OFF_METALAYERS + 16 * 8

"""The content of fixed-size metalayer `name`."""
meta(f::Frame, name::AbstractString) = GC.@preserve f _meta(handle(f), name)

function _meta(p::Ptr{Cvoid}, name::AbstractString)
    for i in 0:Int(unsafe_load(Ptr{UInt16}(p + OFF_NMETALAYERS)))-1
        m = unsafe_load(Ptr{Ptr{Cvoid}}(p + OFF_METALAYERS + 8i))
        m == C_NULL && continue
        if unsafe_string(unsafe_load(Ptr{Cstring}(m))) == name
            content = unsafe_load(Ptr{Ptr{UInt8}}(m + 8))
            len = unsafe_load(Ptr{Int32}(m + 16))
            return copy(unsafe_wrap(Array, content, len))
        end
    end
    throw(B2frameError("meta($(repr(name)))", -16))
end

"""The content of vlmetalayer `name` (decompressed)."""
function vlmeta(f::Frame, name::AbstractString)
    p = Ref{Ptr{UInt8}}(C_NULL)
    n = Ref{Int32}(0)
    check("blosc2_vlmeta_get($(repr(name)))",
          @ccall libb2frame.blosc2_vlmeta_get(f::Ptr{Cvoid}, name::Cstring, p::Ptr{Ptr{UInt8}}, n::Ptr{Int32})::Cint)
    out = copy(unsafe_wrap(Array, p[], n[]))
    Libc.free(p[])
    out
end

"""Add or replace vlmetalayer `name`."""
function setvlmeta!(f::Frame, name::AbstractString, content::Vector{UInt8})
    h = f
    exists = (@ccall libb2frame.blosc2_vlmeta_exists(h::Ptr{Cvoid}, name::Cstring)::Cint) >= 0
    rc = exists ?
        (@ccall libb2frame.blosc2_vlmeta_update(h::Ptr{Cvoid}, name::Cstring, content::Ptr{UInt8}, length(content)::Int32, C_NULL::Ptr{Cvoid})::Cint) :
        (@ccall libb2frame.blosc2_vlmeta_add(h::Ptr{Cvoid}, name::Cstring, content::Ptr{UInt8}, length(content)::Int32, C_NULL::Ptr{Cvoid})::Cint)
    check("blosc2_vlmeta_add/update($(repr(name)))", rc)
end

deletevlmeta!(f::Frame, name::AbstractString) =
    check("blosc2_vlmeta_delete", @ccall libb2frame.blosc2_vlmeta_delete(f::Ptr{Cvoid}, name::Cstring)::Cint)

"""Names of the vlmetalayers, in frame order."""
function vlmetanames(f::Frame)
    h = f
    n = Int(GC.@preserve f unsafe_load(Ptr{Int16}(handle(f) + OFF_NMETALAYERS + 8 + 8192 * 8)))
    names = Vector{Ptr{Cchar}}(undef, n)
    check("blosc2_vlmeta_get_names", @ccall libb2frame.blosc2_vlmeta_get_names(h::Ptr{Cvoid}, names::Ptr{Ptr{Cchar}})::Cint)
    [unsafe_string(p) for p in names]
end

end # module

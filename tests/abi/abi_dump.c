/*
 * Prints the ABI-relevant facts of whichever blosc2.h it is compiled against: the size of every
 * public struct, the offset, size and signedness of every field, the value of every constant,
 * and every field of every default-parameter constant. scripts/abi-check.sh compiles it once
 * against the reference c-blosc2 headers and once against b2frame's, and diffs the outputs.
 */
#define _POSIX_C_SOURCE 200809L

#include <blosc2.h>
#include <b2nd.h>
#include <blosc2/codecs-registry.h>
#include <blosc2/filters-registry.h>
#include <blosc2/tuners-registry.h>

#include <stddef.h>
#include <stdio.h>

#define STRUCT(T) printf("struct %s size=%zu align=%zu\n", #T, sizeof(T), _Alignof(T))

/* Any field: offset and size. */
#define FIELD(T, f)                                                                      \
  printf("field %s.%s offset=%zu size=%zu\n", #T, #f, offsetof(T, f), sizeof(((T *)0)->f))

/* An integer field: also whether its type is signed. */
#define IFIELD(T, f)                                                                     \
  printf("field %s.%s offset=%zu size=%zu signed=%d\n", #T, #f, offsetof(T, f),           \
         sizeof(((T *)0)->f), (int)((__typeof__(((T *)0)->f))-1 < 0))

#define CONST(c) printf("const %s = %lld\n", #c, (long long)(c))
#define STRCONST(c) printf("string %s = \"%s\"\n", #c, c)

/* Default constants: integers by value, pointers as NULL or their string. */
#define DEF_INT(d, f) printf("default %s.%s = %lld\n", #d, #f, (long long)(d).f)
#define DEF_PTR(d, f) printf("default %s.%s = %s\n", #d, #f, (d).f == NULL ? "NULL" : "non-NULL")
#define DEF_STR(d, f) printf("default %s.%s = \"%s\"\n", #d, #f, (d).f == NULL ? "(null)" : (d).f)
#define DEF_ARR(d, f, n)                                                                 \
  do {                                                                                   \
    int k_;                                                                              \
    for (k_ = 0; k_ < (n); k_++) {                                                       \
      printf("default %s.%s[%d] = %lld\n", #d, #f, k_, (long long)(d).f[k_]);            \
    }                                                                                    \
  } while (0)
#define DEF_PARR(d, f, n)                                                                \
  do {                                                                                   \
    int k_;                                                                              \
    for (k_ = 0; k_ < (n); k_++) {                                                       \
      printf("default %s.%s[%d] = %s\n", #d, #f, k_, (d).f[k_] == NULL ? "NULL" : "non-NULL"); \
    }                                                                                    \
  } while (0)

static void structs(void) {
  STRUCT(blosc2_instr);
  FIELD(blosc2_instr, cratio);
  FIELD(blosc2_instr, cspeed);
  FIELD(blosc2_instr, filter_speed);
  FIELD(blosc2_instr, flags);

  STRUCT(blosc2_io_cb);
  IFIELD(blosc2_io_cb, id);
  FIELD(blosc2_io_cb, name);
  IFIELD(blosc2_io_cb, is_allocation_necessary);
  FIELD(blosc2_io_cb, open);
  FIELD(blosc2_io_cb, close);
  FIELD(blosc2_io_cb, size);
  FIELD(blosc2_io_cb, write);
  FIELD(blosc2_io_cb, read);
  FIELD(blosc2_io_cb, truncate);
  FIELD(blosc2_io_cb, destroy);

  STRUCT(blosc2_io);
  IFIELD(blosc2_io, id);
  FIELD(blosc2_io, name);
  FIELD(blosc2_io, params);

  STRUCT(blosc2_tuner);
  FIELD(blosc2_tuner, init);
  FIELD(blosc2_tuner, next_blocksize);
  FIELD(blosc2_tuner, next_cparams);
  FIELD(blosc2_tuner, update);
  FIELD(blosc2_tuner, free);
  IFIELD(blosc2_tuner, id);
  FIELD(blosc2_tuner, name);

  STRUCT(blosc2_prefilter_params);
  FIELD(blosc2_prefilter_params, user_data);
  FIELD(blosc2_prefilter_params, input);
  FIELD(blosc2_prefilter_params, output);
  IFIELD(blosc2_prefilter_params, output_size);
  IFIELD(blosc2_prefilter_params, output_typesize);
  IFIELD(blosc2_prefilter_params, output_offset);
  IFIELD(blosc2_prefilter_params, nchunk);
  IFIELD(blosc2_prefilter_params, nblock);
  IFIELD(blosc2_prefilter_params, tid);
  FIELD(blosc2_prefilter_params, ttmp);
  IFIELD(blosc2_prefilter_params, ttmp_nbytes);
  FIELD(blosc2_prefilter_params, ctx);
  IFIELD(blosc2_prefilter_params, output_is_disposable);

  STRUCT(blosc2_postfilter_params);
  FIELD(blosc2_postfilter_params, user_data);
  FIELD(blosc2_postfilter_params, input);
  FIELD(blosc2_postfilter_params, output);
  IFIELD(blosc2_postfilter_params, size);
  IFIELD(blosc2_postfilter_params, typesize);
  IFIELD(blosc2_postfilter_params, offset);
  IFIELD(blosc2_postfilter_params, nchunk);
  IFIELD(blosc2_postfilter_params, nblock);
  IFIELD(blosc2_postfilter_params, tid);
  FIELD(blosc2_postfilter_params, ttmp);
  IFIELD(blosc2_postfilter_params, ttmp_nbytes);
  FIELD(blosc2_postfilter_params, ctx);

  STRUCT(blosc2_cparams);
  IFIELD(blosc2_cparams, compcode);
  IFIELD(blosc2_cparams, compcode_meta);
  IFIELD(blosc2_cparams, clevel);
  IFIELD(blosc2_cparams, use_dict);
  IFIELD(blosc2_cparams, typesize);
  IFIELD(blosc2_cparams, nthreads);
  IFIELD(blosc2_cparams, blocksize);
  IFIELD(blosc2_cparams, splitmode);
  FIELD(blosc2_cparams, schunk);
  FIELD(blosc2_cparams, filters);
  FIELD(blosc2_cparams, filters_meta);
  FIELD(blosc2_cparams, prefilter);
  FIELD(blosc2_cparams, preparams);
  FIELD(blosc2_cparams, tuner_params);
  IFIELD(blosc2_cparams, tuner_id);
  IFIELD(blosc2_cparams, instr_codec);
  FIELD(blosc2_cparams, codec_params);
  FIELD(blosc2_cparams, filter_params);

  STRUCT(blosc2_dparams);
  IFIELD(blosc2_dparams, nthreads);
  FIELD(blosc2_dparams, schunk);
  FIELD(blosc2_dparams, postfilter);
  FIELD(blosc2_dparams, postparams);
  IFIELD(blosc2_dparams, typesize);

  STRUCT(blosc2_storage);
  IFIELD(blosc2_storage, contiguous);
  FIELD(blosc2_storage, urlpath);
  FIELD(blosc2_storage, cparams);
  FIELD(blosc2_storage, dparams);
  FIELD(blosc2_storage, io);

  STRUCT(blosc2_metalayer);
  FIELD(blosc2_metalayer, name);
  FIELD(blosc2_metalayer, content);
  IFIELD(blosc2_metalayer, content_len);

  STRUCT(blosc2_schunk);
  IFIELD(blosc2_schunk, version);
  IFIELD(blosc2_schunk, compcode);
  IFIELD(blosc2_schunk, compcode_meta);
  IFIELD(blosc2_schunk, clevel);
  IFIELD(blosc2_schunk, splitmode);
  IFIELD(blosc2_schunk, typesize);
  IFIELD(blosc2_schunk, blocksize);
  IFIELD(blosc2_schunk, chunksize);
  IFIELD(blosc2_schunk, flags2);
  IFIELD(blosc2_schunk, use_dict);
  FIELD(blosc2_schunk, filters);
  FIELD(blosc2_schunk, filters_meta);
  IFIELD(blosc2_schunk, nchunks);
  IFIELD(blosc2_schunk, current_nchunk);
  IFIELD(blosc2_schunk, nbytes);
  IFIELD(blosc2_schunk, cbytes);
  FIELD(blosc2_schunk, data);
  IFIELD(blosc2_schunk, data_len);
  FIELD(blosc2_schunk, storage);
  FIELD(blosc2_schunk, frame);
  FIELD(blosc2_schunk, cctx);
  FIELD(blosc2_schunk, dctx);
  FIELD(blosc2_schunk, metalayers);
  IFIELD(blosc2_schunk, nmetalayers);
  FIELD(blosc2_schunk, vlmetalayers);
  IFIELD(blosc2_schunk, nvlmetalayers);
  FIELD(blosc2_schunk, tuner_params);
  IFIELD(blosc2_schunk, tuner_id);
  IFIELD(blosc2_schunk, ndim);
  FIELD(blosc2_schunk, blockshape);
  IFIELD(blosc2_schunk, view);
  IFIELD(blosc2_schunk, change_tick);

  STRUCT(blosc2_codec);
  IFIELD(blosc2_codec, compcode);
  FIELD(blosc2_codec, compname);
  IFIELD(blosc2_codec, complib);
  IFIELD(blosc2_codec, version);
  FIELD(blosc2_codec, encoder);
  FIELD(blosc2_codec, decoder);

  STRUCT(blosc2_filter);
  IFIELD(blosc2_filter, id);
  FIELD(blosc2_filter, name);
  IFIELD(blosc2_filter, version);
  FIELD(blosc2_filter, forward);
  FIELD(blosc2_filter, backward);

  STRUCT(blosc2_stdio_file);
  FIELD(blosc2_stdio_file, file);

  STRUCT(blosc2_stdio_params);
  IFIELD(blosc2_stdio_params, locking);

  STRUCT(blosc2_stdio_mmap);
  FIELD(blosc2_stdio_mmap, mode);
  IFIELD(blosc2_stdio_mmap, initial_mapping_size);
  IFIELD(blosc2_stdio_mmap, needs_free);
  FIELD(blosc2_stdio_mmap, addr);
  FIELD(blosc2_stdio_mmap, urlpath);
  IFIELD(blosc2_stdio_mmap, file_size);
  IFIELD(blosc2_stdio_mmap, mapping_size);
  IFIELD(blosc2_stdio_mmap, is_memory_only);
  FIELD(blosc2_stdio_mmap, file);
  IFIELD(blosc2_stdio_mmap, fd);
  IFIELD(blosc2_stdio_mmap, access_flags);
  IFIELD(blosc2_stdio_mmap, map_flags);

  /* b2nd.h: the array struct (b2nd_context_t is opaque in both headers). */
  STRUCT(struct chunk_cache_s);
  FIELD(struct chunk_cache_s, data);
  IFIELD(struct chunk_cache_s, nchunk);

  STRUCT(b2nd_array_t);
  FIELD(b2nd_array_t, sc);
  IFIELD(b2nd_array_t, shape[0]);
  FIELD(b2nd_array_t, shape);
  IFIELD(b2nd_array_t, chunkshape[0]);
  FIELD(b2nd_array_t, chunkshape);
  IFIELD(b2nd_array_t, extshape[0]);
  FIELD(b2nd_array_t, extshape);
  IFIELD(b2nd_array_t, blockshape[0]);
  FIELD(b2nd_array_t, blockshape);
  IFIELD(b2nd_array_t, extchunkshape[0]);
  FIELD(b2nd_array_t, extchunkshape);
  IFIELD(b2nd_array_t, nitems);
  IFIELD(b2nd_array_t, chunknitems);
  IFIELD(b2nd_array_t, extnitems);
  IFIELD(b2nd_array_t, blocknitems);
  IFIELD(b2nd_array_t, extchunknitems);
  IFIELD(b2nd_array_t, ndim);
  FIELD(b2nd_array_t, chunk_cache);
  IFIELD(b2nd_array_t, item_array_strides[0]);
  FIELD(b2nd_array_t, item_array_strides);
  IFIELD(b2nd_array_t, item_chunk_strides[0]);
  FIELD(b2nd_array_t, item_chunk_strides);
  IFIELD(b2nd_array_t, item_extchunk_strides[0]);
  FIELD(b2nd_array_t, item_extchunk_strides);
  IFIELD(b2nd_array_t, item_block_strides[0]);
  FIELD(b2nd_array_t, item_block_strides);
  IFIELD(b2nd_array_t, block_chunk_strides[0]);
  FIELD(b2nd_array_t, block_chunk_strides);
  IFIELD(b2nd_array_t, chunk_array_strides[0]);
  FIELD(b2nd_array_t, chunk_array_strides);
  FIELD(b2nd_array_t, dtype);
  IFIELD(b2nd_array_t, dtype_format);
  IFIELD(b2nd_array_t, last_tick);

  printf("typedef blosc_timestamp_t size=%zu\n", sizeof(blosc_timestamp_t));
  printf("typedef blosc_threads_callback size=%zu\n", sizeof(blosc_threads_callback));
}

static void constants(void) {
  CONST(BLOSC2_VERSION_MAJOR);
  CONST(BLOSC2_VERSION_MINOR);
  CONST(BLOSC2_VERSION_RELEASE);
  STRCONST(BLOSC2_VERSION_STRING);
  STRCONST(BLOSC2_VERSION_DATE);

  CONST(BLOSC1_VERSION_FORMAT_PRE1);
  CONST(BLOSC1_VERSION_FORMAT);
  CONST(BLOSC2_VERSION_FORMAT_ALPHA);
  CONST(BLOSC2_VERSION_FORMAT_BETA1);
  CONST(BLOSC2_VERSION_FORMAT_STABLE);
  CONST(BLOSC2_VERSION_FORMAT_VL_BLOCKS);
  CONST(BLOSC2_VERSION_FORMAT);
  CONST(BLOSC2_VERSION_FRAME_FORMAT_BETA2);
  CONST(BLOSC2_VERSION_FRAME_FORMAT_RC1);
  CONST(BLOSC2_VERSION_FRAME_FORMAT_VL_BLOCKS);
  CONST(BLOSC2_VERSION_FRAME_FORMAT);

  CONST(BLOSC_MIN_HEADER_LENGTH);
  CONST(BLOSC_EXTENDED_HEADER_LENGTH);
  CONST(BLOSC2_MAX_OVERHEAD);
  CONST(BLOSC2_MAX_BUFFERSIZE);
  CONST(BLOSC_MAX_TYPESIZE);
  CONST(BLOSC_MIN_BUFFERSIZE);

  CONST(BLOSC2_DEFINED_TUNER_START);
  CONST(BLOSC2_DEFINED_TUNER_STOP);
  CONST(BLOSC2_GLOBAL_REGISTERED_TUNER_START);
  CONST(BLOSC2_GLOBAL_REGISTERED_TUNER_STOP);
  CONST(BLOSC2_GLOBAL_REGISTERED_TUNERS);
  CONST(BLOSC2_USER_REGISTERED_TUNER_START);
  CONST(BLOSC2_USER_REGISTERED_TUNER_STOP);
  CONST(BLOSC_STUNE);
  CONST(BLOSC_LAST_TUNER);
  CONST(BLOSC_LAST_REGISTERED_TUNE);

  CONST(BLOSC2_DEFINED_FILTERS_START);
  CONST(BLOSC2_DEFINED_FILTERS_STOP);
  CONST(BLOSC2_GLOBAL_REGISTERED_FILTERS_START);
  CONST(BLOSC2_GLOBAL_REGISTERED_FILTERS_STOP);
  CONST(BLOSC2_GLOBAL_REGISTERED_FILTERS);
  CONST(BLOSC2_USER_REGISTERED_FILTERS_START);
  CONST(BLOSC2_USER_REGISTERED_FILTERS_STOP);
  CONST(BLOSC2_MAX_FILTERS);
  CONST(BLOSC2_MAX_UDFILTERS);
  CONST(BLOSC_NOSHUFFLE);
  CONST(BLOSC_NOFILTER);
  CONST(BLOSC_SHUFFLE);
  CONST(BLOSC_BITSHUFFLE);
  CONST(BLOSC_DELTA);
  CONST(BLOSC_TRUNC_PREC);
  CONST(BLOSC_LAST_FILTER);
  CONST(BLOSC_LAST_REGISTERED_FILTER);

  CONST(BLOSC_DOSHUFFLE);
  CONST(BLOSC_MEMCPYED);
  CONST(BLOSC_DOBITSHUFFLE);
  CONST(BLOSC_DODELTA);
  CONST(BLOSC2_USEDICT);
  CONST(BLOSC2_BIGENDIAN);
  CONST(BLOSC2_INSTR_CODEC);
  CONST(BLOSC2_VL_BLOCKS);
  CONST(BLOSC2_MAXDICTSIZE);
  CONST(BLOSC2_MINUSEFULDICT);
  CONST(BLOSC2_MAXBLOCKSIZE);
  CONST(BLOSC2_MAXTYPESIZE);

  CONST(BLOSC2_DEFINED_CODECS_START);
  CONST(BLOSC2_DEFINED_CODECS_STOP);
  CONST(BLOSC2_GLOBAL_REGISTERED_CODECS_START);
  CONST(BLOSC2_GLOBAL_REGISTERED_CODECS_STOP);
  CONST(BLOSC2_GLOBAL_REGISTERED_CODECS);
  CONST(BLOSC2_USER_REGISTERED_CODECS_START);
  CONST(BLOSC2_USER_REGISTERED_CODECS_STOP);
  CONST(BLOSC_BLOSCLZ);
  CONST(BLOSC_LZ4);
  CONST(BLOSC_LZ4HC);
  CONST(BLOSC_ZLIB);
  CONST(BLOSC_ZSTD);
  CONST(BLOSC_LAST_CODEC);
  CONST(BLOSC_LAST_REGISTERED_CODEC);
  STRCONST(BLOSC_BLOSCLZ_COMPNAME);
  STRCONST(BLOSC_LZ4_COMPNAME);
  STRCONST(BLOSC_LZ4HC_COMPNAME);
  STRCONST(BLOSC_ZLIB_COMPNAME);
  STRCONST(BLOSC_ZSTD_COMPNAME);
  CONST(BLOSC_BLOSCLZ_LIB);
  CONST(BLOSC_LZ4_LIB);
  CONST(BLOSC_ZLIB_LIB);
  CONST(BLOSC_ZSTD_LIB);
  CONST(BLOSC_UDCODEC_LIB);
  CONST(BLOSC_SCHUNK_LIB);
  STRCONST(BLOSC_BLOSCLZ_LIBNAME);
  STRCONST(BLOSC_LZ4_LIBNAME);
  STRCONST(BLOSC_ZLIB_LIBNAME);
  STRCONST(BLOSC_ZSTD_LIBNAME);
  CONST(BLOSC_BLOSCLZ_FORMAT);
  CONST(BLOSC_LZ4_FORMAT);
  CONST(BLOSC_LZ4HC_FORMAT);
  CONST(BLOSC_ZLIB_FORMAT);
  CONST(BLOSC_ZSTD_FORMAT);
  CONST(BLOSC_UDCODEC_FORMAT);
  CONST(BLOSC_BLOSCLZ_VERSION_FORMAT);
  CONST(BLOSC_LZ4_VERSION_FORMAT);
  CONST(BLOSC_LZ4HC_VERSION_FORMAT);
  CONST(BLOSC_ZLIB_VERSION_FORMAT);
  CONST(BLOSC_ZSTD_VERSION_FORMAT);
  CONST(BLOSC_UDCODEC_VERSION_FORMAT);

  CONST(BLOSC_ALWAYS_SPLIT);
  CONST(BLOSC_NEVER_SPLIT);
  CONST(BLOSC_AUTO_SPLIT);
  CONST(BLOSC_FORWARD_COMPAT_SPLIT);

  CONST(BLOSC2_CHUNK_VERSION);
  CONST(BLOSC2_CHUNK_VERSIONLZ);
  CONST(BLOSC2_CHUNK_FLAGS);
  CONST(BLOSC2_CHUNK_TYPESIZE);
  CONST(BLOSC2_CHUNK_NBYTES);
  CONST(BLOSC2_CHUNK_BLOCKSIZE);
  CONST(BLOSC2_CHUNK_CBYTES);
  CONST(BLOSC2_CHUNK_FILTER_CODES);
  CONST(BLOSC2_CHUNK_FILTER_META);
  CONST(BLOSC2_CHUNK_BLOSC2_FLAGS2);
  CONST(BLOSC2_CHUNK_BLOSC2_FLAGS);

  CONST(BLOSC2_NO_SPECIAL);
  CONST(BLOSC2_SPECIAL_ZERO);
  CONST(BLOSC2_SPECIAL_NAN);
  CONST(BLOSC2_SPECIAL_VALUE);
  CONST(BLOSC2_SPECIAL_UNINIT);
  CONST(BLOSC2_SPECIAL_LASTID);
  CONST(BLOSC2_SPECIAL_MASK);

  CONST(BLOSC2_ERROR_SUCCESS);
  CONST(BLOSC2_ERROR_FAILURE);
  CONST(BLOSC2_ERROR_STREAM);
  CONST(BLOSC2_ERROR_DATA);
  CONST(BLOSC2_ERROR_MEMORY_ALLOC);
  CONST(BLOSC2_ERROR_READ_BUFFER);
  CONST(BLOSC2_ERROR_WRITE_BUFFER);
  CONST(BLOSC2_ERROR_CODEC_SUPPORT);
  CONST(BLOSC2_ERROR_CODEC_PARAM);
  CONST(BLOSC2_ERROR_CODEC_DICT);
  CONST(BLOSC2_ERROR_VERSION_SUPPORT);
  CONST(BLOSC2_ERROR_INVALID_HEADER);
  CONST(BLOSC2_ERROR_INVALID_PARAM);
  CONST(BLOSC2_ERROR_FILE_READ);
  CONST(BLOSC2_ERROR_FILE_WRITE);
  CONST(BLOSC2_ERROR_FILE_OPEN);
  CONST(BLOSC2_ERROR_NOT_FOUND);
  CONST(BLOSC2_ERROR_RUN_LENGTH);
  CONST(BLOSC2_ERROR_FILTER_PIPELINE);
  CONST(BLOSC2_ERROR_CHUNK_INSERT);
  CONST(BLOSC2_ERROR_CHUNK_APPEND);
  CONST(BLOSC2_ERROR_CHUNK_UPDATE);
  CONST(BLOSC2_ERROR_2GB_LIMIT);
  CONST(BLOSC2_ERROR_SCHUNK_COPY);
  CONST(BLOSC2_ERROR_FRAME_TYPE);
  CONST(BLOSC2_ERROR_FILE_TRUNCATE);
  CONST(BLOSC2_ERROR_THREAD_CREATE);
  CONST(BLOSC2_ERROR_POSTFILTER);
  CONST(BLOSC2_ERROR_FRAME_SPECIAL);
  CONST(BLOSC2_ERROR_SCHUNK_SPECIAL);
  CONST(BLOSC2_ERROR_PLUGIN_IO);
  CONST(BLOSC2_ERROR_FILE_REMOVE);
  CONST(BLOSC2_ERROR_NULL_POINTER);
  CONST(BLOSC2_ERROR_INVALID_INDEX);
  CONST(BLOSC2_ERROR_METALAYER_NOT_FOUND);
  CONST(BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED);
  CONST(BLOSC2_ERROR_TUNER);
  CONST(BLOSC2_ERROR_LOCK);

  CONST(BLOSC2_IO_FILESYSTEM);
  CONST(BLOSC2_IO_FILESYSTEM_MMAP);
  CONST(BLOSC_IO_LAST_BLOSC_DEFINED);
  CONST(BLOSC_IO_LAST_REGISTERED);
  CONST(BLOSC2_IO_BLOSC_DEFINED);
  CONST(BLOSC2_IO_REGISTERED);
  CONST(BLOSC2_IO_USER_DEFINED);

  CONST(BLOSC2_MAX_METALAYERS);
  CONST(BLOSC2_METALAYER_NAME_MAXLEN);
  CONST(BLOSC2_MAX_VLMETALAYERS);
  CONST(BLOSC2_VLMETALAYERS_NAME_MAXLEN);

  CONST(BLOSC_CODEC_NDLZ);
  CONST(BLOSC_CODEC_ZFP_FIXED_ACCURACY);
  CONST(BLOSC_CODEC_ZFP_FIXED_PRECISION);
  CONST(BLOSC_CODEC_ZFP_FIXED_RATE);
  CONST(BLOSC_CODEC_OPENHTJ2K);
  CONST(BLOSC_CODEC_GROK);
  CONST(BLOSC_CODEC_OPENZL);
  CONST(BLOSC_CODEC_J2K);
  CONST(BLOSC_CODEC_HTJ2K);
  CONST(BLOSC_FILTER_NDCELL);
  CONST(BLOSC_FILTER_NDMEAN);
  CONST(BLOSC_FILTER_BYTEDELTA_BUGGY);
  CONST(BLOSC_FILTER_BYTEDELTA);
  CONST(BLOSC_FILTER_INT_TRUNC);
  CONST(BLOSC_BTUNE);

  CONST(B2ND_METALAYER_VERSION);
  CONST(B2ND_MAX_DIM);
  CONST(B2ND_MAX_METALAYERS);
  CONST(DTYPE_NUMPY_FORMAT);
  STRCONST(B2ND_DEFAULT_DTYPE);
  CONST(B2ND_DEFAULT_DTYPE_FORMAT);
}

static void defaults(void) {
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, compcode);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, compcode_meta);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, clevel);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, use_dict);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, typesize);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, nthreads);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, blocksize);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, splitmode);
  DEF_PTR(BLOSC2_CPARAMS_DEFAULTS, schunk);
  DEF_ARR(BLOSC2_CPARAMS_DEFAULTS, filters, BLOSC2_MAX_FILTERS);
  DEF_ARR(BLOSC2_CPARAMS_DEFAULTS, filters_meta, BLOSC2_MAX_FILTERS);
  DEF_PTR(BLOSC2_CPARAMS_DEFAULTS, prefilter);
  DEF_PTR(BLOSC2_CPARAMS_DEFAULTS, preparams);
  DEF_PTR(BLOSC2_CPARAMS_DEFAULTS, tuner_params);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, tuner_id);
  DEF_INT(BLOSC2_CPARAMS_DEFAULTS, instr_codec);
  DEF_PTR(BLOSC2_CPARAMS_DEFAULTS, codec_params);
  DEF_PARR(BLOSC2_CPARAMS_DEFAULTS, filter_params, BLOSC2_MAX_FILTERS);

  DEF_INT(BLOSC2_DPARAMS_DEFAULTS, nthreads);
  DEF_PTR(BLOSC2_DPARAMS_DEFAULTS, schunk);
  DEF_PTR(BLOSC2_DPARAMS_DEFAULTS, postfilter);
  DEF_PTR(BLOSC2_DPARAMS_DEFAULTS, postparams);
  DEF_INT(BLOSC2_DPARAMS_DEFAULTS, typesize);

  DEF_INT(BLOSC2_STORAGE_DEFAULTS, contiguous);
  DEF_PTR(BLOSC2_STORAGE_DEFAULTS, urlpath);
  DEF_PTR(BLOSC2_STORAGE_DEFAULTS, cparams);
  DEF_PTR(BLOSC2_STORAGE_DEFAULTS, dparams);
  DEF_PTR(BLOSC2_STORAGE_DEFAULTS, io);

  DEF_INT(BLOSC2_IO_DEFAULTS, id);
  DEF_STR(BLOSC2_IO_DEFAULTS, name);
  DEF_PTR(BLOSC2_IO_DEFAULTS, params);

  DEF_INT(BLOSC2_STDIO_PARAMS_DEFAULTS, locking);

  DEF_STR(BLOSC2_STDIO_MMAP_DEFAULTS, mode);
  DEF_INT(BLOSC2_STDIO_MMAP_DEFAULTS, initial_mapping_size);
  DEF_INT(BLOSC2_STDIO_MMAP_DEFAULTS, needs_free);
  DEF_PTR(BLOSC2_STDIO_MMAP_DEFAULTS, addr);
  DEF_PTR(BLOSC2_STDIO_MMAP_DEFAULTS, urlpath);
  DEF_INT(BLOSC2_STDIO_MMAP_DEFAULTS, file_size);
  DEF_INT(BLOSC2_STDIO_MMAP_DEFAULTS, mapping_size);
  DEF_INT(BLOSC2_STDIO_MMAP_DEFAULTS, is_memory_only);
  DEF_PTR(BLOSC2_STDIO_MMAP_DEFAULTS, file);
  DEF_INT(BLOSC2_STDIO_MMAP_DEFAULTS, fd);
  DEF_INT(BLOSC2_STDIO_MMAP_DEFAULTS, access_flags);
  DEF_INT(BLOSC2_STDIO_MMAP_DEFAULTS, map_flags);
}

int main(void) {
  structs();
  constants();
  defaults();
  return 0;
}

/* User codecs and filters (registration rules and round trips), prefilters and postfilters
 * (called once per block with the documented parameters), and the threads callback. */
#include "blosc2.h"
#include "harness.h"

enum { N = 64 * 1024, NITEMS = N / 4, BLOCK = 8192, NBLOCKS = N / BLOCK };
static int32_t src[NITEMS];
static uint8_t chunk[N + BLOSC2_MAX_OVERHEAD];
static int32_t out[NITEMS];

static void fill(void) {
  for (int i = 0; i < NITEMS; i++) src[i] = i / 8;
}

/* --- a byte run-length codec: (value, count) pairs --- */
static int encoder_calls, decoder_calls;

static int rle_encode(const uint8_t *in, int32_t in_len, uint8_t *o, int32_t o_len, uint8_t meta,
                      blosc2_cparams *cparams, const void *chunk_) {
  (void)meta;
  (void)chunk_;
  if (cparams == NULL) return -1;
  encoder_calls++;
  int32_t w = 0;
  for (int32_t i = 0; i < in_len;) {
    int32_t run = 1;
    while (i + run < in_len && run < 255 && in[i + run] == in[i]) run++;
    if (w + 2 > o_len) return 0; /* does not fit: store raw */
    o[w++] = in[i];
    o[w++] = (uint8_t)run;
    i += run;
  }
  return w;
}

static int rle_decode(const uint8_t *in, int32_t in_len, uint8_t *o, int32_t o_len, uint8_t meta,
                      blosc2_dparams *dparams, const void *chunk_) {
  (void)meta;
  (void)chunk_;
  if (dparams == NULL) return -1;
  decoder_calls++;
  int32_t w = 0;
  for (int32_t i = 0; i + 1 < in_len; i += 2) {
    if (w + in[i + 1] > o_len) return BLOSC2_ERROR_WRITE_BUFFER;
    memset(o + w, in[i], in[i + 1]);
    w += in[i + 1];
  }
  return w;
}

static void test_user_codec(void) {
  fill();
  blosc2_init();
  blosc2_codec codec = {0};
  codec.compcode = 244;
  codec.compname = "rle";
  codec.complib = 244;
  codec.version = 1;
  codec.encoder = rle_encode;
  codec.decoder = rle_decode;
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0);
  CHECK_EQ_INT(blosc2_register_codec(&codec), 0); /* same id and name: fine */
  blosc2_codec clash = codec;
  clash.compname = "other";
  CHECK_EQ_INT(blosc2_register_codec(&clash), BLOSC2_ERROR_CODEC_PARAM);
  clash.compcode = 100; /* below the user range */
  CHECK_EQ_INT(blosc2_register_codec(&clash), BLOSC2_ERROR_CODEC_PARAM);
  CHECK_EQ_INT(blosc2_compname_to_compcode("rle"), 244);
  const char *name = NULL;
  CHECK_EQ_INT(blosc2_compcode_to_compname(244, &name), 244);
  CHECK_EQ_STR(name, "rle");
  /* user codecs cannot be used through the Blosc1 API */
  CHECK_EQ_INT(blosc1_set_compressor("rle"), BLOSC2_ERROR_CODEC_SUPPORT);

  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = 244;
  cp.typesize = 4;
  cp.blocksize = BLOCK;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  encoder_calls = 0;
  int csize = blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk);
  blosc2_free_ctx(cctx);
  CHECK(csize > 32);
  CHECK(csize < N / 4);
  CHECK(encoder_calls >= NBLOCKS);
  CHECK_EQ_INT(chunk[2] >> 5, BLOSC_UDCODEC_FORMAT);
  CHECK_EQ_INT(chunk[22], 244);

  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  decoder_calls = 0;
  memset(out, 0, N);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  CHECK(decoder_calls > 0);
  blosc2_free_ctx(dctx);
  blosc2_destroy();
}

/* --- a user filter: add / subtract the meta byte --- */
static int forward_calls, backward_calls;

static int add_forward(const uint8_t *in, uint8_t *o, int32_t size, uint8_t meta, blosc2_cparams *cparams,
                       uint8_t id) {
  if (cparams == NULL || id != 201) return BLOSC2_ERROR_FAILURE;
  forward_calls++;
  for (int32_t i = 0; i < size; i++) o[i] = (uint8_t)(in[i] + meta);
  return 0;
}

static int add_backward(const uint8_t *in, uint8_t *o, int32_t size, uint8_t meta, blosc2_dparams *dparams,
                        uint8_t id) {
  if (dparams == NULL || id != 201) return BLOSC2_ERROR_FAILURE;
  backward_calls++;
  for (int32_t i = 0; i < size; i++) o[i] = (uint8_t)(in[i] - meta);
  return 0;
}

static void test_user_filter(void) {
  fill();
  blosc2_init();
  blosc2_filter filter = {0};
  filter.id = 201;
  filter.name = "add";
  filter.version = 1;
  filter.forward = add_forward;
  filter.backward = add_backward;
  CHECK_EQ_INT(blosc2_register_filter(&filter), 0);
  blosc2_filter low = filter;
  low.id = 40;
  CHECK_EQ_INT(blosc2_register_filter(&low), BLOSC2_ERROR_FAILURE);
  blosc2_filter clash = filter;
  clash.name = "other";
  CHECK_EQ_INT(blosc2_register_filter(&clash), BLOSC2_ERROR_FAILURE);

  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = BLOCK;
  cp.filters[3] = 201;
  cp.filters_meta[3] = 3;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  forward_calls = 0;
  int csize = blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk);
  blosc2_free_ctx(cctx);
  CHECK(csize > 32);
  CHECK_EQ_INT(forward_calls, NBLOCKS);
  CHECK_EQ_INT(chunk[16 + 3], 201);
  CHECK_EQ_INT(chunk[24 + 3], 3);

  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  backward_calls = 0;
  memset(out, 0, N);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  CHECK_EQ_INT(backward_calls, NBLOCKS);
  blosc2_free_ctx(dctx);

  /* an unregistered user filter fails at compression time, not at context creation */
  cp.filters[3] = 202;
  cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  CHECK(blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk) < 0);
  blosc2_free_ctx(cctx);
  blosc2_destroy();
}

/* --- prefilter / postfilter --- */
static int pre_calls, pre_seen[NBLOCKS], pre_bad;

static int double_prefilter(blosc2_prefilter_params *p) {
  int32_t *tag = (int32_t *)p->user_data;
  pre_calls++;
  if (tag == NULL || *tag != 1234 || p->ctx == NULL || p->nchunk != -1) pre_bad++;
  if (p->output_size != BLOCK || p->output_typesize != 4) pre_bad++;
  if (p->output_offset != p->nblock * BLOCK) pre_bad++;
  if (p->nblock < 0 || p->nblock >= NBLOCKS) return 1;
  pre_seen[p->nblock]++;
  const int32_t *in = (const int32_t *)p->input;
  int32_t *o = (int32_t *)p->output;
  if (in != src + p->nblock * (BLOCK / 4)) pre_bad++;
  for (int i = 0; i < p->output_size / 4; i++) o[i] = in[i] * 2;
  return 0;
}

static int post_calls, post_seen[NBLOCKS], post_bad;

static int plus_one_postfilter(blosc2_postfilter_params *p) {
  int32_t *tag = (int32_t *)p->user_data;
  post_calls++;
  if (tag == NULL || *tag != 5678 || p->ctx == NULL || p->nchunk != -1) post_bad++;
  if (p->size != BLOCK || p->typesize != 4 || p->offset != p->nblock * BLOCK) post_bad++;
  if (p->nblock < 0 || p->nblock >= NBLOCKS) return 1;
  post_seen[p->nblock]++;
  const int32_t *in = (const int32_t *)p->input;
  int32_t *o = (int32_t *)p->output;
  if ((uint8_t *)o != (uint8_t *)out + p->offset) post_bad++;
  for (int i = 0; i < p->size / 4; i++) o[i] = in[i] + 1;
  return 0;
}

static void test_prefilter_and_postfilter(void) {
  fill();
  int32_t pretag = 1234, posttag = 5678;
  blosc2_prefilter_params preparams;
  memset(&preparams, 0, sizeof preparams);
  preparams.user_data = &pretag;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = BLOCK;
  cp.prefilter = double_prefilter;
  cp.preparams = &preparams;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  blosc2_cparams got;
  CHECK_EQ_INT(blosc2_ctx_get_cparams(cctx, &got), 0);
  CHECK(got.prefilter == double_prefilter);
  CHECK_NOT_NULL(got.preparams);
  pre_calls = pre_bad = 0;
  memset(pre_seen, 0, sizeof pre_seen);
  int csize = blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk);
  blosc2_free_ctx(cctx);
  CHECK(csize > 32);
  CHECK_EQ_INT(pre_calls, NBLOCKS);
  CHECK_EQ_INT(pre_bad, 0);
  for (int b = 0; b < NBLOCKS; b++) CHECK_EQ_INT(pre_seen[b], 1);

  /* plain decompression shows the prefilter's output */
  blosc2_context *dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
  CHECK_NOT_NULL(dctx);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  for (int i = 0; i < NITEMS; i++) CHECK_EQ_INT(out[i], src[i] * 2);
  blosc2_free_ctx(dctx);

  blosc2_postfilter_params postparams;
  memset(&postparams, 0, sizeof postparams);
  postparams.user_data = &posttag;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.postfilter = plus_one_postfilter;
  dp.postparams = &postparams;
  dctx = blosc2_create_dctx(dp);
  CHECK_NOT_NULL(dctx);
  blosc2_dparams dgot;
  CHECK_EQ_INT(blosc2_ctx_get_dparams(dctx, &dgot), 0);
  CHECK(dgot.postfilter == plus_one_postfilter);
  post_calls = post_bad = 0;
  memset(post_seen, 0, sizeof post_seen);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_INT(post_calls, NBLOCKS);
  CHECK_EQ_INT(post_bad, 0);
  for (int b = 0; b < NBLOCKS; b++) CHECK_EQ_INT(post_seen[b], 1);
  for (int i = 0; i < NITEMS; i++) CHECK_EQ_INT(out[i], src[i] * 2 + 1);
  blosc2_free_ctx(dctx);
}

/* --- failing callbacks, worker ids --- */
static int fail_on_block2(blosc2_prefilter_params *p) { return p->nblock == 2; }
static int fail_on_block1(blosc2_postfilter_params *p) { return p->nblock == 1; }
static int max_tid;
static int copy_prefilter(blosc2_prefilter_params *p) {
  if (p->tid > max_tid) max_tid = p->tid;
  memcpy(p->output, p->input, (size_t)p->output_size);
  return 0;
}

static void test_callback_failures_and_tids(void) {
  fill();
  blosc2_prefilter_params preparams;
  memset(&preparams, 0, sizeof preparams);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = BLOCK;
  cp.prefilter = fail_on_block2;
  cp.preparams = &preparams;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  CHECK_EQ_INT(blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk), BLOSC2_ERROR_FILTER_PIPELINE);
  blosc2_free_ctx(cctx);

  /* worker ids stay below nthreads */
  cp.prefilter = copy_prefilter;
  cp.nthreads = 3;
  max_tid = -1;
  cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  int csize = blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk);
  blosc2_free_ctx(cctx);
  CHECK(csize > 32);
  CHECK(max_tid >= 0 && max_tid < 3);

  blosc2_postfilter_params postparams;
  memset(&postparams, 0, sizeof postparams);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.postfilter = fail_on_block1;
  dp.postparams = &postparams;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK_NOT_NULL(dctx);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), BLOSC2_ERROR_POSTFILTER);
  /* getitem runs the postfilter of the blocks it touches only */
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, BLOCK / 4, 10, out, N), BLOSC2_ERROR_POSTFILTER);
  CHECK_EQ_INT(blosc2_getitem_ctx(dctx, chunk, csize, 0, 10, out, N), 40);
  blosc2_free_ctx(dctx);
}

/* --- threads callback --- */
static int callback_calls, callback_jobs, callback_max_jobs;

static void serial_callback(void *data, void (*dojob)(void *), int numjobs, size_t elsize, void *jobdata) {
  int *tag = (int *)data;
  if (tag == NULL || *tag != 99) return;
  callback_calls++;
  callback_jobs += numjobs;
  if (numjobs > callback_max_jobs) callback_max_jobs = numjobs;
  for (int i = 0; i < numjobs; i++) dojob((uint8_t *)jobdata + (size_t)i * elsize);
}

static void test_threads_callback(void) {
  fill();
  int tag = 99;
  blosc2_set_threads_callback(serial_callback, &tag);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.blocksize = BLOCK;
  cp.nthreads = 4;
  cp.filters[4] = BLOSC_DELTA;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  CHECK_NOT_NULL(cctx);
  callback_calls = callback_jobs = callback_max_jobs = 0;
  int csize = blosc2_compress_ctx(cctx, src, N, chunk, sizeof chunk);
  blosc2_free_ctx(cctx);
  CHECK(csize > 32);
  CHECK(callback_calls >= 1);
  CHECK(callback_jobs >= 1);
  /* nthreads bounds the number of jobs handed over */
  CHECK(callback_max_jobs <= 4);

  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 4;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  CHECK_NOT_NULL(dctx);
  callback_calls = callback_max_jobs = 0;
  memset(out, 0, N);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  CHECK(callback_calls >= 1);
  CHECK(callback_max_jobs >= 1 && callback_max_jobs <= 4);
  blosc2_free_ctx(dctx);
  blosc2_set_threads_callback(NULL, NULL);

  /* back to the library's own workers */
  dctx = blosc2_create_dctx(dp);
  CHECK_NOT_NULL(dctx);
  callback_calls = 0;
  memset(out, 0, N);
  CHECK_EQ_INT(blosc2_decompress_ctx(dctx, chunk, csize, out, N), N);
  CHECK_EQ_MEM(out, src, N);
  CHECK_EQ_INT(callback_calls, 0);
  blosc2_free_ctx(dctx);
}

int main(void) {
  RUN(test_user_codec);
  RUN(test_user_filter);
  RUN(test_prefilter_and_postfilter);
  RUN(test_callback_failures_and_tids);
  RUN(test_threads_callback);
  return harness_summary();
}

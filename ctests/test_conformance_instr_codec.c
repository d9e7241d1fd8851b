/* Conformance gap found by running c-blosc2's examples against libb2frame (README, "Conformance"):
 * with `cparams.instr_codec = true` c-blosc2 3.3.5 stores, instead of the data, one
 * `blosc2_instr` record per block (compression ratio, speeds, flags), and decompression returns
 * those records: nblocks * sizeof(blosc2_instr) bytes. Speeds are timing-dependent and not
 * checked; sizes, ratios and the record count are. */
#include <blosc2.h>

#include "harness.h"

#define NITEMS 100000
#define BLOCKSIZE 40000

static void test_instr_codec_returns_one_record_per_block(void) {
  static float data[NITEMS];
  for (int i = 0; i < NITEMS; i++) data[i] = (float)i;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = sizeof(float);
  cp.compcode = BLOSC_BLOSCLZ;
  cp.splitmode = BLOSC_NEVER_SPLIT;
  cp.clevel = 5;
  cp.instr_codec = true;
  cp.blocksize = BLOCKSIZE;
  blosc2_context *cctx = blosc2_create_cctx(cp);
  static uint8_t chunk[sizeof(data) + BLOSC2_MAX_OVERHEAD];
  int cb = blosc2_compress_ctx(cctx, data, sizeof(data), chunk, sizeof(chunk));
  blosc2_free_ctx(cctx);
  CHECK(cb > 0);
  int nblocks = (int)(sizeof(data) / BLOCKSIZE);
  /* The chunk holds records, not data: far smaller than even a good compression of the data. */
  CHECK(cb <= BLOSC2_MAX_OVERHEAD + nblocks * 4 + nblocks * (int)sizeof(blosc2_instr) + 64);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_context *dctx = blosc2_create_dctx(dp);
  static uint8_t out[sizeof(data)];
  int n = blosc2_decompress_ctx(dctx, chunk, cb, out, sizeof(out));
  blosc2_free_ctx(dctx);
  CHECK_EQ_INT(n, nblocks * (int)sizeof(blosc2_instr));
  blosc2_instr *rec = (blosc2_instr *)out;
  for (int i = 0; i < nblocks; i++) CHECK(rec[i].cratio > 1.0f && rec[i].cratio < 1000.0f);
}

int main(void) {
  blosc2_init();
  RUN(test_instr_codec_returns_one_record_per_block);
  blosc2_destroy();
  return harness_summary();
}

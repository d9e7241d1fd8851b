/* Decompression of one 4 MiB chunk with 1 or 2 threads through the public API
 * (blosc2_create_cctx / blosc2_decompress_ctx), compiled against b2frame and against c-blosc2
 * 3.3.5 (benches/threads/run.sh). The chunk is made by the library under test (clevel 5,
 * nthreads 1).
 *
 *   decompress CODEC FILTER DATA NTHREADS ITERS
 *     CODEC 0 blosclz, 1 lz4, 5 zstd; FILTER 1 shuffle, 2 bitshuffle;
 *     DATA 0 float64 series (sin), 1 int32 below 100 (pseudo-random), 2 random int32
 *
 * Prints the best wall time of ITERS decompressions and the process CPU time per
 * decompression (all threads), in microseconds; checks the bytes. */
#include <blosc2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <sys/resource.h>

static double cpu(void){struct rusage u;getrusage(RUSAGE_SELF,&u);return u.ru_utime.tv_sec+u.ru_utime.tv_usec*1e-6+u.ru_stime.tv_sec+u.ru_stime.tv_usec*1e-6;}
static double wall(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  int codec=atoi(argv[1]), filt=atoi(argv[2]), kind=atoi(argv[3]), nthreads=atoi(argv[4]), iters=atoi(argv[5]);
  int size=4<<20; int ts = kind==0?8:4;
  uint8_t*src=malloc(size),*dst=malloc(size+64),*out=malloc(size);
  uint64_t x=42;
  for(int i=0;i<size/ts;i++){
    if(kind==0){double v=sin(i*0.001)*1000; memcpy(src+i*8,&v,8);}
    else {x=x*6364136223846793005ULL+1442695040888963407ULL; int32_t v = kind==1 ? (int32_t)((x>>33)%100) : (int32_t)(x>>32); memcpy(src+i*4,&v,4);}
  }
  blosc2_init();
  blosc2_cparams cp=BLOSC2_CPARAMS_DEFAULTS; cp.compcode=codec; cp.clevel=5; cp.typesize=ts; cp.nthreads=1; cp.filters[5]=filt;
  blosc2_context*c=blosc2_create_cctx(cp);
  int n=blosc2_compress_ctx(c,src,size,dst,size+64);
  blosc2_dparams dp=BLOSC2_DPARAMS_DEFAULTS; dp.nthreads=nthreads;
  blosc2_context*d=blosc2_create_dctx(dp);
  blosc2_decompress_ctx(d,dst,n,out,size);
  double best=1e9; double c0=cpu();
  for(int i=0;i<iters;i++){double w=wall(); blosc2_decompress_ctx(d,dst,n,out,size); w=wall()-w; if(w<best)best=w;}
  double c1=cpu();
  if(memcmp(out,src,size)) {printf("MISMATCH\n");return 1;}
  printf("%.1f %.1f\n", best*1e6, (c1-c0)/iters*1e6);
  return 0;
}

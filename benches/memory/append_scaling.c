/* Appends of 4 KiB int32 chunks (clevel 5, nthreads 1, blosclz + shuffle defaults) to a new
 * cframe file through blosc2_schunk_append_buffer; prints the append rate of every block of
 * BLOCK appends and the total time. Compiled against each library like frame_ops.c:
 *
 *   append_scaling N BLOCK PATH
 */
#include <blosc2.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double wall(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  long n=atol(argv[1]); long block=atol(argv[2]);
  blosc2_init();
  blosc2_cparams cp=BLOSC2_CPARAMS_DEFAULTS; cp.typesize=4; cp.clevel=5; cp.nthreads=1;
  blosc2_dparams dp=BLOSC2_DPARAMS_DEFAULTS; dp.nthreads=1;
  blosc2_storage st=BLOSC2_STORAGE_DEFAULTS; st.contiguous=true; st.urlpath=argv[3]; st.cparams=&cp; st.dparams=&dp;
  blosc2_remove_urlpath(argv[3]);
  blosc2_schunk*sc=blosc2_schunk_new(&st);
  int32_t buf[1024];
  double t=wall(), t0=t;
  for(long i=0;i<n;i++){
    for(int k=0;k<1024;k++) buf[k]=(int32_t)(i*1024+k);
    if(blosc2_schunk_append_buffer(sc,buf,sizeof buf)!=i+1){fprintf(stderr,"append failed\n");return 1;}
    if((i+1)%block==0){double w=wall(); printf("%ld %.0f\n", i+1, block/(w-t)); fflush(stdout); t=w;}
  }
  blosc2_schunk_free(sc);
  printf("total %.1f s\n", wall()-t0);
  return 0;
}

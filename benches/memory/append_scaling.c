/* Appends of 4 KiB int32 chunks (clevel 5, nthreads 1, blosclz + shuffle defaults) through
 * blosc2_schunk_append_buffer; prints the append rate of every block of BLOCK appends (with
 * the number of chunks in the frame at its end) and the total time. Compiled against each
 * library like frame_ops.c (benches/memory/append_scaling.sh runs the table).
 *
 *   append_scaling N BLOCK PATH [MODE]
 *
 * MODE: file (default: a new cframe file at PATH), sframe (a new sframe directory at PATH),
 * memory (a new in-memory cframe, PATH unused), open (append to the existing cframe file or
 * sframe at PATH), frombuf (read the cframe file PATH into a malloc'ed buffer, open it with
 * blosc2_schunk_from_buffer(copy=false) and append to that in-memory frame; copy=true would
 * give c-blosc2 a plain super-chunk, which keeps no index; the buffer is not freed, as
 * c-blosc2 reallocs it), build (append N
 * chunks to a plain in-memory super-chunk, which keeps no offsets index, and write it to the
 * cframe file PATH with blosc2_schunk_to_file: the prebuilt frames of the large sizes).
 */
#include <blosc2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double wall(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  if(argc<4){fprintf(stderr,"usage: append_scaling N BLOCK PATH [file|sframe|memory|open|frombuf]\n");return 2;}
  long n=atol(argv[1]); long block=atol(argv[2]);
  const char*mode=argc>4?argv[4]:"file";
  blosc2_init();
  blosc2_cparams cp=BLOSC2_CPARAMS_DEFAULTS; cp.typesize=4; cp.clevel=5; cp.nthreads=1;
  blosc2_dparams dp=BLOSC2_DPARAMS_DEFAULTS; dp.nthreads=1;
  blosc2_storage st=BLOSC2_STORAGE_DEFAULTS; st.contiguous=true; st.urlpath=argv[3]; st.cparams=&cp; st.dparams=&dp;
  blosc2_schunk*sc=NULL; uint8_t*frame=NULL;
  if(!strcmp(mode,"open")){
    sc=blosc2_schunk_open(argv[3]);
  }else if(!strcmp(mode,"frombuf")){
    FILE*f=fopen(argv[3],"rb"); if(!f){perror(argv[3]);return 1;}
    fseek(f,0,SEEK_END); long len=ftell(f); fseek(f,0,SEEK_SET);
    frame=malloc(len); if(fread(frame,1,len,f)!=(size_t)len){fprintf(stderr,"short read\n");return 1;} fclose(f);
    sc=blosc2_schunk_from_buffer(frame,len,false); frame=NULL;
  }else{
    if(!strcmp(mode,"sframe")) st.contiguous=false;
    if(!strcmp(mode,"build")) st.contiguous=false;
    if(!strcmp(mode,"memory")||!strcmp(mode,"build")) st.urlpath=NULL; else blosc2_remove_urlpath(argv[3]);
    sc=blosc2_schunk_new(&st);
  }
  if(!sc){fprintf(stderr,"cannot open/create\n");return 1;}
  long start=sc->nchunks;
  int32_t buf[1024];
  double t=wall(), t0=t;
  for(long i=start;i<start+n;i++){
    for(int k=0;k<1024;k++) buf[k]=(int32_t)(i*1024+k);
    if(blosc2_schunk_append_buffer(sc,buf,sizeof buf)!=i+1){fprintf(stderr,"append failed\n");return 1;}
    if((i+1-start)%block==0){double w=wall(); printf("%ld %.0f\n", i+1, block/(w-t)); fflush(stdout); t=w;}
  }
  if(!strcmp(mode,"build")){blosc2_remove_urlpath(argv[3]); if(blosc2_schunk_to_file(sc,argv[3])<0){fprintf(stderr,"to_file failed\n");return 1;}}
  blosc2_schunk_free(sc);
  free(frame);
  printf("total %.1f s\n", wall()-t0);
  return 0;
}

// A frame from Go: creates a cframe file of int32 items, appends three chunks and a vlmetalayer,
// reopens it, reads a slice across two chunks and shows an error carrying its BLOSC2_ERROR_* code.
// Run against an installed b2frame (the bindings find it through pkg-config):
//
//	export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig LD_LIBRARY_PATH=$PREFIX/lib
//	cd examples/go && go run .
package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/b2frame/b2frame-go/b2frame"
)

func main() {
	dir, _ := os.MkdirTemp("", "b2frame-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "data.b2frame")

	o := b2frame.DefaultOptions()
	o.Path, o.Typesize, o.Codec = path, 4, b2frame.Zstd
	f, err := b2frame.New(o)
	if err != nil {
		log.Fatal(err)
	}
	for c := int32(0); c < 3; c++ {
		items := make([]int32, 1000)
		for i := range items {
			items[i] = c*1000 + int32(i)
		}
		if _, err := b2frame.AppendSlice(f, items); err != nil {
			log.Fatal(err)
		}
	}
	if err := f.SetVLMeta("unit", []byte("m")); err != nil {
		log.Fatal(err)
	}
	f.Close()

	g, err := b2frame.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	s, err := b2frame.SliceOf[int32](g, 998, 1002)
	if err != nil {
		log.Fatal(err)
	}
	unit, _ := g.VLMeta("unit")
	fmt.Println(g.NChunks(), s, string(unit)) // 3 [998 999 1000 1001] m
	if _, err := g.Chunk(7); err != nil {
		fmt.Println(err) // blosc2_schunk_get_chunk: Invalid parameter supplied to function (-12)
	}
}

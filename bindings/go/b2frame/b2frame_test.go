package b2frame

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func ints(start, n int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = start + int32(i)
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error with code %d, got %v", code, err)
	}
	if e.Code != code || e.Message == "" {
		t.Fatalf("want code %d with a message, got %v", code, e)
	}
}

func checkData(t *testing.T, f *Frame, want [][]int32) {
	t.Helper()
	if f.NChunks() != int64(len(want)) {
		t.Fatalf("nchunks %d, want %d", f.NChunks(), len(want))
	}
	var all []int32
	for i, w := range want {
		got, err := ChunkOf[int32](f, int64(i))
		must(t, err)
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("chunk %d differs", i)
		}
		all = append(all, w...)
	}
	got, err := SliceOf[int32](f, 0, int64(len(all)))
	must(t, err)
	if !reflect.DeepEqual(got, all) {
		t.Fatal("slice over all items differs")
	}
}

func TestMemoryRoundTrip(t *testing.T) {
	o := DefaultOptions()
	o.Typesize = 4
	o.Codec = Zstd
	o.Filters = []Filter{BitShuffle}
	f, err := New(o)
	must(t, err)
	defer f.Close()
	must(t, f.AddMeta("dims", []byte{0x92, 0x10, 0x20}))
	chunks := [][]int32{ints(0, 1000), ints(5000, 1000), ints(-7, 1000)}
	for _, c := range chunks {
		_, err := AppendSlice(f, c)
		must(t, err)
	}
	if f.NBytes() != 12000 || f.Chunksize() != 4000 || f.Typesize() != 4 {
		t.Fatalf("counters: nbytes %d chunksize %d typesize %d", f.NBytes(), f.Chunksize(), f.Typesize())
	}
	checkData(t, f, chunks)
	// A slice across the chunk boundary, then overwrite it.
	got, err := SliceOf[int32](f, 998, 1003)
	must(t, err)
	if !reflect.DeepEqual(got, []int32{998, 999, 5000, 5001, 5002}) {
		t.Fatalf("slice %v", got)
	}
	must(t, SetSliceOf(f, 998, []int32{1, 2, 3, 4, 5}))
	copy(chunks[0][998:], []int32{1, 2})
	copy(chunks[1], []int32{3, 4, 5})
	checkData(t, f, chunks)

	must(t, f.SetVLMeta("attrs", []byte("first")))
	must(t, f.SetVLMeta("attrs", []byte("second, longer")))
	must(t, f.SetVLMeta("other", []byte{1, 2, 3}))
	if !reflect.DeepEqual(f.VLMetaNames(), []string{"attrs", "other"}) {
		t.Fatalf("vlmeta names %v", f.VLMetaNames())
	}
	must(t, f.DeleteVLMeta("other"))

	b, err := f.Bytes()
	must(t, err)
	if !bytes.Equal(b[2:10], []byte("b2frame\x00")) {
		t.Fatal("Bytes is not a cframe")
	}
	g, err := FromBytes(b)
	must(t, err)
	defer g.Close()
	checkData(t, g, chunks)
	m, err := g.Meta("dims")
	must(t, err)
	if !bytes.Equal(m, []byte{0x92, 0x10, 0x20}) || !reflect.DeepEqual(g.MetaNames(), []string{"dims"}) {
		t.Fatalf("meta %x names %v", m, g.MetaNames())
	}
	v, err := g.VLMeta("attrs")
	must(t, err)
	if string(v) != "second, longer" || !reflect.DeepEqual(g.VLMetaNames(), []string{"attrs"}) {
		t.Fatalf("vlmeta %q names %v", v, g.VLMetaNames())
	}
	// Same frame, same bytes, as c-blosc2 writes them: FromBytes makes a copy that is not
	// frame-backed, and serialising a copy writes the header's compression thread count as 0
	// (bytes 64-65, after the int16 marker at 63) where the in-memory frame kept its own 1.
	// The fingerprint (the trailer's last 17 bytes: type and CRCs) covers the header, so it
	// changes with it. From then on the bytes are stable.
	b2, err := g.Bytes()
	must(t, err)
	n := len(b)
	if len(b2) != n || !bytes.Equal(b[:64], b2[:64]) || !bytes.Equal(b[66:n-17], b2[66:n-17]) {
		t.Fatal("to/from bytes changed more than the header's thread count and the fingerprint")
	}
	h, err := FromBytes(b2)
	must(t, err)
	defer h.Close()
	b3, err := h.Bytes()
	must(t, err)
	if !bytes.Equal(b2, b3) {
		t.Fatal("to/from bytes is not stable")
	}
}

func TestFileAndSparseMutations(t *testing.T) {
	dir := t.TempDir()
	for _, contiguous := range []bool{true, false} {
		path := filepath.Join(dir, "f.b2frame")
		if !contiguous {
			path = filepath.Join(dir, "s.b2sframe")
		}
		o := DefaultOptions()
		o.Path, o.Contiguous, o.Typesize = path, contiguous, 4
		f, err := New(o)
		must(t, err)
		chunks := [][]int32{ints(0, 500), ints(1000, 500), ints(2000, 500)}
		for _, c := range chunks {
			_, err := AppendSlice(f, c)
			must(t, err)
		}
		c, err := f.Compress(asBytes(ints(9000, 500)))
		must(t, err)
		n, err := f.InsertChunk(1, c)
		must(t, err)
		if n != 4 {
			t.Fatalf("insert gave %d chunks", n)
		}
		u, err := f.Compress(asBytes(ints(-500, 500)))
		must(t, err)
		must(t, f.UpdateChunk(3, u))
		n, err = f.DeleteChunk(0)
		must(t, err)
		if n != 3 {
			t.Fatalf("delete gave %d chunks", n)
		}
		raw, err := f.RawChunk(0)
		must(t, err)
		if !bytes.Equal(raw, c) {
			t.Fatal("RawChunk is not the inserted chunk")
		}
		must(t, f.SetVLMeta("k", []byte("v")))
		must(t, f.Close())
		must(t, f.Close()) // twice is harmless

		g, err := Open(path)
		must(t, err)
		checkData(t, g, [][]int32{ints(9000, 500), ints(1000, 500), ints(-500, 500)})
		v, err := g.VLMeta("k")
		must(t, err)
		if string(v) != "v" {
			t.Fatalf("vlmeta %q", v)
		}
		out := filepath.Join(dir, "copy.b2frame")
		os.Remove(out)
		must(t, g.ToFile(out))
		must(t, g.Close())
		h, err := Open(out)
		must(t, err)
		checkData(t, h, [][]int32{ints(9000, 500), ints(1000, 500), ints(-500, 500)})
		must(t, h.Close())
	}
}

func TestOpenOffsetInsideLargerFile(t *testing.T) {
	o := DefaultOptions()
	o.Typesize = 4
	f, err := New(o)
	must(t, err)
	_, err = AppendSlice(f, ints(40, 300))
	must(t, err)
	b, err := f.Bytes()
	must(t, err)
	must(t, f.Close())
	path := filepath.Join(t.TempDir(), "glued.bin")
	must(t, os.WriteFile(path, append(bytes.Repeat([]byte{0xEE}, 100), b...), 0o644))
	_, err = Open(path)
	wantCode(t, err, -11)
	g, err := OpenOffset(path, 100)
	must(t, err)
	defer g.Close()
	checkData(t, g, [][]int32{ints(40, 300)})
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "missing.b2frame"))
	wantCode(t, err, -15)
	if !errors.Is(err, ErrFileOpen) {
		t.Fatal("errors.Is(ErrFileOpen) does not match")
	}
	junk := filepath.Join(dir, "junk.b2frame")
	must(t, os.WriteFile(junk, bytes.Repeat([]byte{7}, 500), 0o644))
	_, err = Open(junk)
	wantCode(t, err, -11)
	_, err = FromBytes([]byte("definitely not a frame, but long enough to be read as one?"))
	wantCode(t, err, -11)
	_, err = FromBytes(nil)
	wantCode(t, err, -5)

	o := DefaultOptions()
	o.Typesize = 4
	f, err := New(o)
	must(t, err)
	_, err = AppendSlice(f, ints(0, 100))
	must(t, err)
	b, err := f.Bytes()
	must(t, err)
	_, err = FromBytes(b[:len(b)-10])
	if err == nil {
		t.Fatal("a truncated cframe opened")
	}
	// c-blosc2's blosc2_schunk_get_chunk answers BLOSC2_ERROR_INVALID_PARAM for nchunk >= nchunks.
	_, err = f.Chunk(5)
	wantCode(t, err, -12)
	_, err = f.DeleteChunk(-1)
	if err == nil {
		t.Fatal("delete of chunk -1 succeeded")
	}
	_, err = AppendSlice(f, []int64{1, 2})
	wantCode(t, err, -12)
	_, err = f.GetSlice(90, 101)
	wantCode(t, err, -12)
	_, err = f.Meta("nope")
	wantCode(t, err, -16)
	_, err = f.VLMeta("nope")
	if err == nil {
		t.Fatal("missing vlmetalayer found")
	}
	_, err = f.AppendChunk([]byte{1, 2, 3})
	wantCode(t, err, -5)
	must(t, f.Close())
	_, err = f.Append([]byte{1})
	wantCode(t, err, -32)
	if f.NChunks() != -1 {
		t.Fatal("closed frame reports chunks")
	}
}

func TestFinalizerFreesForgottenFrames(t *testing.T) {
	// Not observable directly; this checks that dropping frames without Close does not crash
	// when the collector runs the finalizers.
	for i := 0; i < 50; i++ {
		f, err := New(DefaultOptions())
		must(t, err)
		_, err = f.Append(make([]byte, 800))
		must(t, err)
	}
	for i := 0; i < 3; i++ {
		runtimeGC()
	}
}

func python(t *testing.T) string {
	if p := os.Getenv("B2FRAME_PYTHON"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../../.venv/bin/python")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("python-blosc2 reference missing: %s (run scripts/setup-env.sh or set B2FRAME_PYTHON)", p)
	}
	return p
}

func TestReadsPythonBlosc2Frame(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "py.b2frame")
	script := `
import sys, numpy as np, blosc2
s = blosc2.SChunk(chunksize=4000, data=np.arange(2500, dtype=np.int32),
                  cparams={"codec": blosc2.Codec.LZ4, "typesize": 4}, urlpath=sys.argv[1], mode="w")
s.vlmeta["unit"] = "m"
`
	out, err := exec.Command(python(t), "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	f, err := Open(path)
	must(t, err)
	defer f.Close()
	want := [][]int32{ints(0, 1000), ints(1000, 1000), ints(2000, 500)}
	checkData(t, f, want)
	v, err := f.VLMeta("unit")
	must(t, err)
	// python-blosc2 stores vlmeta values msgpack-encoded: fixstr "m".
	if !bytes.Equal(v, []byte{0xa1, 'm'}) {
		t.Fatalf("vlmeta %x", v)
	}
	// And python-blosc2 reads what the bindings write.
	o := DefaultOptions()
	o.Path, o.Typesize = filepath.Join(dir, "go.b2frame"), 4
	g, err := New(o)
	must(t, err)
	_, err = AppendSlice(g, ints(0, 3000))
	must(t, err)
	must(t, g.Close())
	check := `
import sys, numpy as np, blosc2
s = blosc2.open(sys.argv[1])
assert (np.frombuffer(s[:], dtype=np.int32) == np.arange(3000)).all()
`
	out, err = exec.Command(python(t), "-c", check, o.Path).CombinedOutput()
	if err != nil {
		t.Fatalf("python could not read the Go frame: %v\n%s", err, out)
	}
}

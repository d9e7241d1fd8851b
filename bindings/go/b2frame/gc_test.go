package b2frame

import "runtime"

func runtimeGC() { runtime.GC() }

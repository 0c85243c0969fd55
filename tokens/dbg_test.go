package tokens

import (
	"testing"
	"time"
)

func TestDbgSpeed(t *testing.T) {
	names, texts := speedCorpus()
	encs := []*Exact{O200kBase(), Cl100kBase()}
	for _, e := range encs {
		e.count("warm")
	}
	for i, s := range texts {
		for _, e := range encs {
			passes, start := 0, cpuTime()
			for cpuTime()-start < 500*time.Millisecond {
				e.count(s)
				passes++
			}
			t.Logf("%s %s %.1f", names[i], e.Name(), float64(len(s))*float64(passes)/(cpuTime()-start).Seconds()/1e6)
		}
	}
}

// Package syncbuf is a byte buffer that several goroutines may write to at
// once, for tests that collect what a server or provider logs while they
// read it from the test's goroutine.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer guarded by a mutex. The zero value is empty and
// ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Line appends l and a line break.
func (s *Buffer) Line(l string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(l)
	s.b.WriteByte('\n')
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

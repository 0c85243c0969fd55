//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns both ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Raw output: the terminal passes the bytes written as they are.
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// On a terminal a composed prompt cannot move the cursor, clear the screen
// or reorder what the reader sees: its escapes are shown, its lines and
// tabs kept. Piped, it is written byte for byte.
func TestPromptOnATerminalIsShownEscaped(t *testing.T) {
	prompt := "<frame>\n\tline one\r\x1b[2Kforged\n\u202egnp.exe\n</frame>\n"
	master, slave := openPTY(t)
	if err := writePrompt(slave, prompt); err != nil {
		t.Fatal(err)
	}
	want := "<frame>\n\tline one\\r\\x1b[2Kforged\n\\u202egnp.exe\n</frame>\n"
	got := make([]byte, 0, len(want))
	buf := make([]byte, 256)
	_ = master.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(got) < len(want) {
		n, err := master.Read(buf)
		if err != nil {
			t.Fatalf("read %q, then %v", got, err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != want {
		t.Errorf("on a terminal: %q, want %q", got, want)
	}
	var piped bytes.Buffer
	if err := writePrompt(&piped, prompt); err != nil || piped.String() != prompt {
		t.Errorf("piped: %q %v, want the prompt's bytes", piped.String(), err)
	}
}

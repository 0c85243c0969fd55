package files

import (
	"bytes"
	"html"
	"strings"
)

// htmlText returns the text of an HTML document with the same lines as the
// source: tags and comments removed (a newline inside a tag is kept, so line
// n of the text is line n of the source), script and style bodies dropped,
// entities decoded, the content of <pre> kept as it is. It also returns the
// h1–h6 headings with the line each starts on.
func htmlText(src []byte) ([]byte, []heading) {
	out := make([]byte, 0, len(src))
	var heads []heading
	line := 0
	inHead := 0 // level of the open <hN>, 0 if none
	headLine := 0
	var headText []byte
	text := func(b []byte) {
		if bytes.IndexByte(b, '&') >= 0 {
			b = []byte(html.UnescapeString(string(b)))
		}
		out = append(out, b...)
		if inHead > 0 {
			headText = append(headText, b...)
		}
	}
	keepNewlines := func(b []byte) {
		for range bytes.Count(b, []byte("\n")) {
			out = append(out, '\n')
		}
	}
	for i := 0; i < len(src); {
		lt := bytes.IndexByte(src[i:], '<')
		if lt < 0 {
			text(src[i:])
			break
		}
		text(src[i : i+lt])
		line += bytes.Count(src[i:i+lt], []byte("\n"))
		i += lt
		end, name, closing := scanTag(src, i)
		if end == i+1 && name == "" {
			text(src[i:end]) // a '<' that opens no tag is text
			i = end
			continue
		}
		tag := src[i:end]
		switch {
		case name == "script" || name == "style":
			if !closing {
				stop := indexCloseTag(src[end:], name)
				if stop < 0 {
					stop = len(src) - end
				}
				tag = src[i : end+stop]
				end += stop
			}
		case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
			if !closing {
				inHead, headLine, headText = int(name[1]-'0'), line, headText[:0]
			} else if inHead > 0 {
				t := strings.Join(strings.Fields(string(headText)), " ")
				if t != "" {
					heads = append(heads, heading{line: headLine, level: inHead, text: clip(t)})
				}
				inHead = 0
			}
		}
		keepNewlines(tag)
		line += bytes.Count(tag, []byte("\n"))
		i = end
	}
	return out, heads
}

// scanTag returns the end of the tag or comment starting at src[i] ('<'),
// its lower-case element name and whether it closes an element. A '<' that
// starts no tag is one character of text.
func scanTag(src []byte, i int) (end int, name string, closing bool) {
	if bytes.HasPrefix(src[i:], []byte("<!--")) {
		if j := bytes.Index(src[i+4:], []byte("-->")); j >= 0 {
			return i + 4 + j + 3, "", false
		}
		return len(src), "", false
	}
	j := i + 1
	if j < len(src) && src[j] == '/' {
		closing = true
		j++
	}
	k := j
	for k < len(src) && (src[k] >= 'a' && src[k] <= 'z' || src[k] >= 'A' && src[k] <= 'Z' || src[k] >= '0' && src[k] <= '9') {
		k++
	}
	if k == j && (j >= len(src) || src[j] != '!' && src[j] != '?') {
		return i + 1, "", false // a bare '<' in text
	}
	gt := bytes.IndexByte(src[k:], '>')
	if gt < 0 {
		return len(src), strings.ToLower(string(src[j:k])), closing
	}
	return k + gt + 1, strings.ToLower(string(src[j:k])), closing
}

// indexCloseTag returns the offset of the first "</name" in b, in any
// case, or -1. It looks at b once, without a lower-cased copy of it.
func indexCloseTag(b []byte, name string) int {
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte("</"))
		if i < 0 {
			return -1
		}
		at := off + i
		if rest := b[at+2:]; len(rest) >= len(name) && bytes.EqualFold(rest[:len(name)], []byte(name)) {
			return at
		}
		off = at + 2
	}
}

package files

// stem reduces a lower-case ASCII English word to its stem with the Porter
// algorithm (M.F. Porter, 1980), so that "sniffing", "sniffed" and "sniffs"
// meet at "sniff". Words with anything but a-z are returned unchanged: code
// identifiers and other scripts are not English morphology.
func stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}
	s := stemmer{b: w}
	s.step1ab()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	// Porter undoubles a consonant only after removing -ing or -ed
	// ("sniffing" -> "snif") while "sniff" stays; undoubling every final
	// pair makes the two meet.
	if n := len(s.b); n > 3 && s.doubleCons(n) {
		s.b = s.b[:n-1]
	}
	return s.b
}

type stemmer struct{ b []byte }

// cons reports whether b[i] is a consonant in Porter's sense.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// measure counts the VC sequences in b[:n].
func (s *stemmer) measure(n int) int {
	m, i := 0, 0
	for i < n && s.cons(i) {
		i++
	}
	for i < n {
		for i < n && !s.cons(i) {
			i++
		}
		if i >= n {
			break
		}
		m++
		for i < n && s.cons(i) {
			i++
		}
	}
	return m
}

func (s *stemmer) hasVowel(n int) bool {
	for i := range n {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

func (s *stemmer) doubleCons(n int) bool {
	return n >= 2 && s.b[n-1] == s.b[n-2] && s.cons(n-1)
}

// cvc: b[:n] ends consonant-vowel-consonant, the last not w, x or y.
func (s *stemmer) cvc(n int) bool {
	if n < 3 || !s.cons(n-1) || s.cons(n-2) || !s.cons(n-3) {
		return false
	}
	c := s.b[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}

func (s *stemmer) ends(suffix string) bool {
	n := len(s.b)
	return n > len(suffix) && string(s.b[n-len(suffix):]) == suffix
}

// replace swaps suffix for repl when the stem before it has measure > m.
func (s *stemmer) replace(suffix, repl string, m int) bool {
	if !s.ends(suffix) {
		return false
	}
	n := len(s.b) - len(suffix)
	if s.measure(n) > m {
		s.b = append(s.b[:n], repl...)
	}
	return true
}

func (s *stemmer) step1ab() {
	switch {
	case s.ends("sses"), s.ends("ies"):
		s.b = s.b[:len(s.b)-2]
	case s.ends("ss"):
	case s.ends("s"):
		s.b = s.b[:len(s.b)-1]
	}
	if s.ends("eed") {
		if s.measure(len(s.b)-3) > 0 {
			s.b = s.b[:len(s.b)-1]
		}
		return
	}
	cut := 0
	if s.ends("ed") && s.hasVowel(len(s.b)-2) {
		cut = 2
	} else if s.ends("ing") && s.hasVowel(len(s.b)-3) {
		cut = 3
	}
	if cut == 0 {
		return
	}
	s.b = s.b[:len(s.b)-cut]
	if s.icWithK() {
		s.b = s.b[:len(s.b)-1] // "panicking" -> "panic", as "panics"
		return
	}
	n := len(s.b)
	switch {
	case s.ends("at"), s.ends("bl"), s.ends("iz"):
		s.b = append(s.b, 'e')
	case s.doubleCons(n) && s.b[n-1] != 'l' && s.b[n-1] != 's' && s.b[n-1] != 'z':
		s.b = s.b[:n-1]
	case s.measure(n) == 1 && s.cvc(n):
		s.b = append(s.b, 'e')
	}
}

// icWithK reports whether what is left after -ing or -ed is one of the
// verbs in -ic that English spells with a k before those endings (panic,
// panicking, panicked). Porter's rules cannot tell "panick" from "click",
// so they are listed; without this "panicking" and "panic" never meet.
func (s *stemmer) icWithK() bool {
	switch string(s.b) {
	case "panick", "mimick", "picnick", "traffick", "frolick", "politick":
		return true
	}
	return false
}

func (s *stemmer) step1c() {
	if s.ends("y") && s.hasVowel(len(s.b)-1) {
		s.b[len(s.b)-1] = 'i'
	}
}

var step2Rules = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"},
	{"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"},
	{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"},
	{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}, {"logi", "log"},
}

var step3Rules = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
	{"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
	"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

func (s *stemmer) step2() {
	for _, r := range step2Rules {
		if s.replace(r[0], r[1], 0) {
			return
		}
	}
}

func (s *stemmer) step3() {
	for _, r := range step3Rules {
		if s.replace(r[0], r[1], 0) {
			return
		}
	}
}

func (s *stemmer) step4() {
	for _, suf := range step4Suffixes {
		if !s.ends(suf) {
			continue
		}
		n := len(s.b) - len(suf)
		if suf == "ion" && (n == 0 || (s.b[n-1] != 's' && s.b[n-1] != 't')) {
			return
		}
		if s.measure(n) > 1 {
			s.b = s.b[:n]
		}
		return
	}
}

func (s *stemmer) step5() {
	n := len(s.b)
	if s.b[n-1] == 'e' {
		m := s.measure(n - 1)
		if m > 1 || (m == 1 && !s.cvc(n-1)) {
			s.b = s.b[:n-1]
		}
	}
	n = len(s.b)
	if s.b[n-1] == 'l' && s.doubleCons(n) && s.measure(n) > 1 {
		s.b = s.b[:n-1]
	}
}

package validate

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// This file is a port of what Starlette's Request.json() does with a body:
// json.loads(bytes), i.e. bytes.decode(json.detect_encoding(b),
// 'surrogatepass') followed by JSONDecoder.decode with the C scanner
// (CPython Lib/json/__init__.py, Lib/json/decoder.py, Modules/_json.c).
// Error messages are CPython's JSONDecodeError.msg texts; which one is raised
// for a malformed document follows the C scanner's control flow exactly,
// including CPython 3.13's "Illegal trailing comma" messages (CPython 3.12
// and older say "Expecting property name enclosed in double quotes" and
// "Expecting value" there).

const (
	// maxJSONDepth approximates the point where CPython's C scanner raises
	// RecursionError (Py_C_RECURSION_LIMIT is 10000 in CPython 3.13; the
	// exact depth also depends on the interpreter's stack at the time).
	maxJSONDepth = 10000
	// maxIntDigits is Python's default int max_str_digits: int() of a longer
	// literal raises ValueError, which json.loads lets through.
	maxIntDigits = 4300
)

// jsonDecodeError is a json.JSONDecodeError: FastAPI answers it with the
// json_invalid item.
type jsonDecodeError struct{ msg string }

func (e *jsonDecodeError) Error() string { return e.msg }

var (
	// errStopIteration is the C scanner's StopIteration: no value starts at
	// the index. raw_decode turns it into "Expecting value".
	errStopIteration = errors.New("StopIteration")
	// errAbort is any other exception out of json.loads (UnicodeDecodeError,
	// ValueError for huge ints, RecursionError): FastAPI answers 400.
	errAbort = errors.New("body cannot be decoded")
)

// parsePythonJSON decodes body as json.loads(body) would. It returns the
// value, or a *jsonDecodeError, or errAbort.
func parsePythonJSON(body []byte) (any, error) { return parseJSONAs(body, false) }

// parseJSONAs parses with CPython 3.12's messages for trailing commas when
// legacy is set (used to test against older interpreters).
func parseJSONAs(body []byte, legacy bool) (any, error) {
	text, ok := decodeJSONBytes(body)
	if !ok {
		return nil, errAbort
	}
	s := scanner{s: text, legacy: legacy}
	idx := s.skipWS(0)
	v, end, err := s.scanOnce(idx)
	if err == errStopIteration {
		return nil, &jsonDecodeError{"Expecting value"}
	}
	if err != nil {
		return nil, err
	}
	if s.skipWS(end) != len(text) {
		return nil, &jsonDecodeError{"Extra data"}
	}
	return v, nil
}

// decodeJSONBytes is bytes.decode(json.detect_encoding(b), 'surrogatepass'),
// producing WTF-8 text (see pyStr).
func decodeJSONBytes(b []byte) ([]byte, bool) {
	switch {
	case hasPrefix(b, 0x00, 0x00, 0xFE, 0xFF), hasPrefix(b, 0xFF, 0xFE, 0x00, 0x00):
		return decodeWide(b, 4, true, false)
	case hasPrefix(b, 0xFE, 0xFF), hasPrefix(b, 0xFF, 0xFE):
		return decodeWide(b, 2, true, false)
	case hasPrefix(b, 0xEF, 0xBB, 0xBF):
		return decodeUTF8(b[3:])
	}
	if len(b) >= 4 {
		if b[0] == 0 {
			if b[1] != 0 {
				return decodeWide(b, 2, false, true)
			}
			return decodeWide(b, 4, false, true)
		}
		if b[1] == 0 {
			if b[2] != 0 || b[3] != 0 {
				return decodeWide(b, 2, false, false)
			}
			return decodeWide(b, 4, false, false)
		}
	} else if len(b) == 2 {
		if b[0] == 0 {
			return decodeWide(b, 2, false, true)
		}
		if b[1] == 0 {
			return decodeWide(b, 2, false, false)
		}
	}
	return decodeUTF8(b)
}

func hasPrefix(b []byte, p ...byte) bool {
	if len(b) < len(p) {
		return false
	}
	for i, c := range p {
		if b[i] != c {
			return false
		}
	}
	return true
}

// decodeUTF8 accepts strict UTF-8 plus encoded surrogates (ED A0..BF 80..BF),
// which the 'surrogatepass' handler lets through.
func decodeUTF8(b []byte) ([]byte, bool) {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			if _, ok := surrogateAt(string(b[i:min(i+3, len(b))]), 0); ok {
				i += 3
				continue
			}
			return nil, false
		}
		i += size
	}
	return b, true
}

// decodeWide decodes UTF-16 (width 2) or UTF-32 (width 4): with bom set the first unit is a
// BOM choosing the byte order (the 'utf-16' and 'utf-32' codecs), else big selects it. A length
// that is not a whole number of units fails ("truncated data"). Surrogates pass
// ('surrogatepass'; UTF-16 joins a pair); a UTF-32 code point above U+10FFFF fails.
func decodeWide(b []byte, width int, bom, big bool) ([]byte, bool) {
	if bom {
		big = b[0] != 0xFF // FE FF or 00 00 FE FF; the little-endian BOMs start FF FE
		b = b[width:]
	}
	if len(b)%width != 0 {
		return nil, false
	}
	unit := func(i int) rune {
		var u uint32
		for j := range width {
			k := i + j
			if !big {
				k = i + width - 1 - j
			}
			u = u<<8 | uint32(b[k])
		}
		return rune(u) // negative from 2^31 on: refused below with the rest above U+10FFFF
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i += width {
		u := unit(i)
		switch {
		case width == 2 && u >= 0xD800 && u <= 0xDBFF && i+3 < len(b):
			if u2 := unit(i + 2); u2 >= 0xDC00 && u2 <= 0xDFFF {
				out = utf8.AppendRune(out, 0x10000+(u-0xD800)<<10+(u2-0xDC00))
				i += 2
				continue
			}
		case u < 0 || u > 0x10FFFF:
			return nil, false
		}
		out = appendWTF8(out, u)
	}
	return out, true
}

// scanner is the C scanner (Modules/_json.c scan_once_unicode and friends)
// over WTF-8 text. Every structural character is ASCII, so working on bytes
// instead of code points raises the same error for the same document.
type scanner struct {
	s      []byte
	depth  int
	legacy bool
}

func isJSONWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *scanner) skipWS(i int) int {
	for i < len(s.s) && isJSONWS(s.s[i]) {
		i++
	}
	return i
}

func (s *scanner) hasAt(i int, lit string) bool {
	return i+len(lit) <= len(s.s) && string(s.s[i:i+len(lit)]) == lit
}

// nested parses an object or array with parse, one level deeper; past maxJSONDepth it is
// errAbort (CPython's RecursionError).
func (s *scanner) nested(idx int, parse func(idx int) (any, int, error)) (any, int, error) {
	if s.depth >= maxJSONDepth {
		return nil, 0, errAbort
	}
	s.depth++
	v, next, err := parse(idx)
	s.depth--
	return v, next, err
}

func (s *scanner) scanOnce(idx int) (any, int, error) {
	if idx >= len(s.s) {
		return nil, 0, errStopIteration
	}
	switch s.s[idx] {
	case '"':
		str, next, err := s.scanString(idx + 1)
		return str, next, err
	case '{':
		return s.nested(idx+1, s.parseObject)
	case '[':
		return s.nested(idx+1, s.parseArray)
	case 'n':
		if s.hasAt(idx, "null") {
			return nil, idx + 4, nil
		}
	case 't':
		if s.hasAt(idx, "true") {
			return true, idx + 4, nil
		}
	case 'f':
		if s.hasAt(idx, "false") {
			return false, idx + 5, nil
		}
	case 'N':
		if s.hasAt(idx, "NaN") {
			return nan(), idx + 3, nil
		}
	case 'I':
		if s.hasAt(idx, "Infinity") {
			return inf(1), idx + 8, nil
		}
	case '-':
		if s.hasAt(idx, "-Infinity") {
			return inf(-1), idx + 9, nil
		}
	}
	return s.matchNumber(idx)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// matchNumber is _match_number_unicode: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?
// with its quirk that "." and "e" need a following character to be tried.
func (s *scanner) matchNumber(start int) (any, int, error) {
	str := s.s
	end := len(str) - 1
	idx := start
	if str[idx] == '-' {
		idx++
		if idx > end {
			return nil, 0, errStopIteration
		}
	}
	switch {
	case str[idx] >= '1' && str[idx] <= '9':
		idx++
		for idx <= end && isDigit(str[idx]) {
			idx++
		}
	case str[idx] == '0':
		idx++
	default:
		return nil, 0, errStopIteration
	}
	isFloat := false
	if idx < end && str[idx] == '.' && isDigit(str[idx+1]) {
		isFloat = true
		idx += 2
		for idx <= end && isDigit(str[idx]) {
			idx++
		}
	}
	if idx < end && (str[idx] == 'e' || str[idx] == 'E') {
		eStart := idx
		idx++
		if idx < end && (str[idx] == '-' || str[idx] == '+') {
			idx++
		}
		for idx <= end && isDigit(str[idx]) {
			idx++
		}
		if isDigit(str[idx-1]) {
			isFloat = true
		} else {
			idx = eStart
		}
	}
	num := string(str[start:idx])
	if isFloat {
		// float(): correctly rounded; overflow gives inf, as in Python.
		f, _ := strconv.ParseFloat(num, 64)
		return f, idx, nil
	}
	digits := num
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > maxIntDigits {
		return nil, 0, errAbort
	}
	if num == "-0" {
		num = "0"
	}
	return pyInt(num), idx, nil
}

// scanString is scanstring_unicode with strict=True; end is the index after
// the opening quote.
func (s *scanner) scanString(end int) (pyStr, int, error) {
	str := s.s
	n := len(str)
	var out []byte
	for {
		next := end
		var c byte
		for ; next < n; next++ {
			c = str[next]
			if c == '"' || c == '\\' {
				break
			}
			if c <= 0x1f {
				return "", 0, &jsonDecodeError{"Invalid control character at"}
			}
		}
		if next >= n {
			c = 0
		}
		if c != '"' && c != '\\' {
			return "", 0, &jsonDecodeError{"Unterminated string starting at"}
		}
		out = append(out, str[end:next]...)
		next++
		if c == '"' {
			return pyStr(out), next, nil
		}
		if next == n {
			return "", 0, &jsonDecodeError{"Unterminated string starting at"}
		}
		esc := str[next]
		if esc != 'u' {
			end = next + 1
			var r byte
			switch esc {
			case '"', '\\', '/':
				r = esc
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default:
				return "", 0, &jsonDecodeError{`Invalid \escape`}
			}
			out = append(out, r)
			continue
		}
		next++
		end = next + 4
		if end >= n {
			return "", 0, &jsonDecodeError{`Invalid \uXXXX escape`}
		}
		cp, ok := hex4(str[next:end])
		if !ok {
			return "", 0, &jsonDecodeError{`Invalid \uXXXX escape`}
		}
		next = end
		if cp >= 0xD800 && cp <= 0xDBFF && end+6 < n && str[next] == '\\' && str[next+1] == 'u' {
			cp2, ok := hex4(str[next+2 : next+6])
			if !ok {
				return "", 0, &jsonDecodeError{`Invalid \uXXXX escape`}
			}
			if cp2 >= 0xDC00 && cp2 <= 0xDFFF {
				cp = 0x10000 + (cp-0xD800)<<10 + (cp2 - 0xDC00)
				end += 6
			}
		}
		out = appendWTF8(out, cp)
	}
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, d := range b {
		v, ok := hexVal(d)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// parseObject is _parse_object_unicode; idx is after the '{'.
func (s *scanner) parseObject(idx int) (any, int, error) {
	str := s.s
	end := len(str) - 1
	obj := newJSONObject()
	idx = s.skipWS(idx)
	if idx > end || str[idx] != '}' {
		for {
			if idx > end || str[idx] != '"' {
				return nil, 0, &jsonDecodeError{"Expecting property name enclosed in double quotes"}
			}
			key, next, err := s.scanString(idx + 1)
			if err != nil {
				return nil, 0, err
			}
			idx = s.skipWS(next)
			if idx > end || str[idx] != ':' {
				return nil, 0, &jsonDecodeError{"Expecting ':' delimiter"}
			}
			idx = s.skipWS(idx + 1)
			val, next, err := s.scanOnce(idx)
			if err != nil {
				return nil, 0, err
			}
			obj.set(string(key), val)
			var done bool
			if idx, done, err = s.nextItem(next, '}', "object"); err != nil {
				return nil, 0, err
			} else if done {
				break
			}
		}
	}
	return obj, idx + 1, nil
}

// parseArray is _parse_array_unicode; idx is after the '['.
func (s *scanner) parseArray(idx int) (any, int, error) {
	str := s.s
	end := len(str) - 1
	arr := []any{}
	idx = s.skipWS(idx)
	if idx > end || str[idx] != ']' {
		for {
			val, next, err := s.scanOnce(idx)
			if err != nil {
				return nil, 0, err
			}
			arr = append(arr, val)
			var done bool
			if idx, done, err = s.nextItem(next, ']', "array"); err != nil {
				return nil, 0, err
			} else if done {
				break
			}
		}
	}
	return arr, idx + 1, nil
}

// nextItem reads what follows an item of an object or array (what), from idx on: its closing
// byte (done, at the index returned), or a ',' and the start of the next item. Anything else,
// or a trailing comma outside legacy mode, is the C scanner's error.
func (s *scanner) nextItem(idx int, closing byte, what string) (int, bool, error) {
	str, end := s.s, len(s.s)-1
	idx = s.skipWS(idx)
	if idx <= end && str[idx] == closing {
		return idx, true, nil
	}
	if idx > end || str[idx] != ',' {
		return 0, false, &jsonDecodeError{"Expecting ',' delimiter"}
	}
	idx = s.skipWS(idx + 1)
	if idx <= end && str[idx] == closing && !s.legacy {
		return 0, false, &jsonDecodeError{"Illegal trailing comma before end of " + what}
	}
	return idx, false, nil
}

package validate

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// HttpUrl as pydantic 2.10+ defines it (pydantic/networks.py):
// UrlConstraints(max_length=2083, allowed_schemes=['http', 'https']),
// validated by pydantic-core's UrlValidator (src/validators/url.rs) with the
// rust-url crate (servo/rust-url url/src/parser.rs, host.rs; url 2.5.8 with
// idna 1.x, so forbidden characters in a domain are reported as
// "invalid international domain name").

const httpURLMaxLength = 2083

// rust-url's ParseError texts, and pydantic-core's for an empty input.
const (
	urlErrEmptyInput   = "input is empty"
	urlErrEmptyHost    = "empty host"
	urlErrIdna         = "invalid international domain name"
	urlErrInvalidPort  = "invalid port number"
	urlErrInvalidIPv4  = "invalid IPv4 address"
	urlErrInvalidIPv6  = "invalid IPv6 address"
	urlErrDomainChar   = "invalid domain character"
	urlErrRelativeNoBa = "relative URL without a base"
)

// validateHTTPURL validates an HttpUrl: string_unicode for a str holding a
// lone surrogate, url_type for a non-string, url_too_long above 2083 bytes
// (UTF-8 bytes, as pydantic-core counts: Rust's str::len), url_parsing with rust-url's error, then
// url_scheme for a scheme other than http or https. It returns the string
// as sent and the normalised URL.
func validateHTTPURL(loc Loc, in any) (string, *url.URL, *Item) {
	if it := unicodeItem(loc, in); it != nil {
		return "", nil, it
	}
	var s string
	switch x := in.(type) {
	case pyStr:
		s = toValidUTF8(string(x))
	case string:
		s = x
	case pyBytes:
		if !utf8.ValidString(string(x)) {
			it := typeItem("url_type", loc, in)
			return "", nil, &it
		}
		s = string(x)
	default:
		it := typeItem("url_type", loc, in)
		return "", nil, &it
	}
	if len(s) > httpURLMaxLength {
		return "", nil, &Item{Type: "url_too_long", Loc: loc,
			Msg: "URL should have at most " + strconv.Itoa(httpURLMaxLength) + " characters", Input: in,
			Ctx: []CtxPair{{"max_length", httpURLMaxLength}}}
	}
	if s == "" {
		it := errorCtxItem("url_parsing", loc, in, urlErrEmptyInput)
		return "", nil, &it
	}
	u, perr := parseWHATWG(s)
	if perr != "" {
		it := errorCtxItem("url_parsing", loc, in, perr)
		return "", nil, &it
	}
	if u.scheme != "http" && u.scheme != "https" {
		const expected = "'http' or 'https'"
		return "", nil, &Item{Type: "url_scheme", Loc: loc, Msg: "URL scheme should be " + expected, Input: in,
			Ctx: []CtxPair{{"expected_schemes", expected}}}
	}
	return s, u.goURL(), nil
}

// whatwgURL is the result of parsing a special (http-like) URL; for other
// schemes only the scheme is kept, since HttpUrl rejects them anyway.
type whatwgURL struct {
	scheme             string
	username, password string // percent-encoded
	host               string // serialized: domain, dotted IPv4 or [IPv6]
	port               string // "" for none or the scheme's default
	path               string // serialized, starts with "/"
	query, fragment    *string
}

func schemeKind(scheme string) byte {
	switch scheme {
	case "http", "https", "ws", "wss", "ftp":
		return 's'
	case "file":
		return 'f'
	}
	return 'n'
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	case "ftp":
		return "21"
	}
	return ""
}

// parseWHATWG is rust-url's Parser::parse_url without a base URL; it
// returns rust-url's error text, or "".
func parseWHATWG(input string) (*whatwgURL, string) {
	// Leading and trailing C0 controls and spaces are trimmed; tabs and
	// newlines anywhere are ignored.
	input = strings.TrimFunc(input, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(input, "\t\n\r") {
		input = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(input)
	}
	if input == "" || !isASCIIAlpha(input[0]) {
		return nil, urlErrRelativeNoBa
	}
	i := 0
	for i < len(input) && input[i] != ':' {
		c := input[i]
		if !(isASCIIAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.') {
			return nil, urlErrRelativeNoBa
		}
		i++
	}
	if i == len(input) {
		return nil, urlErrRelativeNoBa
	}
	u := &whatwgURL{scheme: strings.ToLower(input[:i])}
	rest := input[i+1:]
	switch schemeKind(u.scheme) {
	case 's':
		rest = strings.TrimLeft(rest, `/\`)
		return u, u.parseAuthorityAndRest(rest, true)
	case 'f':
		return u, parseFile(rest)
	default:
		if after, ok := strings.CutPrefix(rest, "//"); ok {
			return u, u.parseAuthorityAndRest(after, false)
		}
		return u, "" // a path-only URL cannot fail
	}
}

func isASCIIAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// parseAuthorityAndRest is after_double_slash: userinfo, host, port, then
// path, query and fragment.
func (u *whatwgURL) parseAuthorityAndRest(in string, special bool) string {
	// Userinfo: everything before the last '@' of the authority.
	lastAt := -1
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c == '/' || c == '?' || c == '#' || (special && c == '\\') {
			break
		}
		if c == '@' {
			lastAt = i
		}
	}
	hasAuthority := false
	if lastAt == 0 {
		in = in[1:]
		if in != "" && (in[0] == '/' || in[0] == '?' || in[0] == '#' || (special && in[0] == '\\')) {
			return urlErrEmptyHost
		}
	} else if lastAt > 0 {
		info := in[:lastAt]
		in = in[lastAt+1:]
		user, pass, hasColon := strings.Cut(info, ":")
		u.username = percentEncode(user, userinfoSet)
		if hasColon && pass != "" {
			u.password = percentEncode(pass, userinfoSet)
		}
		hasAuthority = user != "" || (hasColon && pass != "")
	}
	// Host: up to ':' outside brackets, '/', '?', '#', or '\' (special).
	end := len(in)
	brackets := false
loop:
	for i := 0; i < len(in); i++ {
		switch c := in[i]; {
		case c == ':' && !brackets:
			end = i
			break loop
		case c == '/' || c == '?' || c == '#' || (special && c == '\\'):
			end = i
			break loop
		case c == '[':
			brackets = true
		case c == ']':
			brackets = false
		}
	}
	hostStr, rest := in[:end], in[end:]
	if special {
		if hostStr == "" {
			return urlErrEmptyHost
		}
		h, e := parseSpecialHost(hostStr)
		if e != "" {
			return e
		}
		u.host = h
	} else {
		h, e := parseOpaqueHost(hostStr)
		if e != "" {
			return e
		}
		if h == "" && strings.HasPrefix(rest, ":") {
			return urlErrEmptyHost
		}
		u.host = h
	}
	if after, ok := strings.CutPrefix(rest, ":"); ok {
		port, remaining, e := parsePort(after, defaultPort(u.scheme))
		if e != "" {
			return e
		}
		u.port, rest = port, remaining
	}
	if u.host == "" && hasAuthority {
		return urlErrEmptyHost
	}
	if special {
		u.parsePathQueryFragment(rest)
	}
	return ""
}

// parsePort is Parser::parse_port in the URL parser context.
func parsePort(in, def string) (string, string, string) {
	port, digits, i := 0, false, 0
	for ; i < len(in); i++ {
		c := in[i]
		if isDigit(c) {
			port = port*10 + int(c-'0')
			if port > 65535 {
				return "", "", urlErrInvalidPort
			}
			digits = true
			continue
		}
		if c != '/' && c != '\\' && c != '?' && c != '#' {
			return "", "", urlErrInvalidPort
		}
		break
	}
	p := strconv.Itoa(port)
	if !digits || p == def {
		p = ""
	}
	return p, in[i:], ""
}

// parseFile checks the only part of a file: URL that can fail: its host.
func parseFile(rest string) string {
	if rest == "" || (rest[0] != '/' && rest[0] != '\\') {
		return ""
	}
	if len(rest) < 2 || (rest[1] != '/' && rest[1] != '\\') {
		return ""
	}
	hostStr := rest[2:]
	if i := strings.IndexAny(hostStr, `/\?#`); i >= 0 {
		hostStr = hostStr[:i]
	}
	if hostStr == "" || (len(hostStr) == 2 && isASCIIAlpha(hostStr[0]) && (hostStr[1] == ':' || hostStr[1] == '|')) {
		return ""
	}
	_, e := parseSpecialHost(hostStr)
	return e
}

// parseSpecialHost is Host::parse: a bracketed IPv6 address, else the
// percent-decoded text through domain-to-ASCII, then IPv4 when it ends in a
// number. It returns the host's serialization.
func parseSpecialHost(s string) (string, string) {
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return "", urlErrInvalidIPv6
		}
		a, ok := parseIPv6(s[1 : len(s)-1])
		if !ok {
			return "", urlErrInvalidIPv6
		}
		return "[" + formatIPv6(a) + "]", ""
	}
	domain, ok := domainToASCII(percentDecode(s))
	if !ok {
		return "", urlErrIdna
	}
	if domain == "" {
		return "", urlErrEmptyHost
	}
	if endsInANumber(domain) {
		v4, ok := parseIPv4(domain)
		if !ok {
			return "", urlErrInvalidIPv4
		}
		return strconv.Itoa(int(v4>>24)) + "." + strconv.Itoa(int(v4>>16&0xff)) + "." +
			strconv.Itoa(int(v4>>8&0xff)) + "." + strconv.Itoa(int(v4&0xff)), ""
	}
	return domain, ""
}

// parseOpaqueHost is Host::parse_opaque, for schemes that are not special.
func parseOpaqueHost(s string) (string, string) {
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return "", urlErrInvalidIPv6
		}
		if _, ok := parseIPv6(s[1 : len(s)-1]); !ok {
			return "", urlErrInvalidIPv6
		}
		return s, ""
	}
	if strings.ContainsAny(s, "\x00\t\n\r #/:<>?@[\\]^|") {
		return "", urlErrDomainChar
	}
	return percentEncode(s, controlsSet), ""
}

// endsInANumber is the WHATWG ends-in-a-number checker.
func endsInANumber(s string) bool {
	parts := strings.Split(s, ".")
	last := parts[len(parts)-1]
	if last == "" {
		if len(parts) == 1 {
			return false
		}
		last = parts[len(parts)-2]
	}
	if last != "" && allDigits(last) {
		return true
	}
	_, ok, _ := parseIPv4Number(last)
	return ok
}

// parseIPv4Number parses a decimal, 0x-hex or 0-octal part; overflow reports
// a valid number that does not fit 32 bits.
func parseIPv4Number(s string) (n uint32, ok, overflow bool) {
	if s == "" {
		return 0, false, false
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		valid := false
		switch base {
		case 8:
			valid = c >= '0' && c <= '7'
		case 10:
			valid = isDigit(c)
		case 16:
			valid = isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
		}
		if !valid {
			return 0, false, false
		}
	}
	v, err := strconv.ParseUint(s, base, 32)
	if err != nil {
		return 0, true, true
	}
	return uint32(v), true, false
}

// parseIPv4 is the WHATWG IPv4 parser.
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 || len(parts) == 0 {
		return 0, false
	}
	nums := make([]uint32, 0, len(parts))
	for _, p := range parts {
		n, ok, overflow := parseIPv4Number(p)
		if !ok || overflow {
			return 0, false
		}
		nums = append(nums, n)
	}
	ipv4 := nums[len(nums)-1]
	nums = nums[:len(nums)-1]
	if uint64(ipv4) > uint64(0xFFFFFFFF)>>(8*uint(len(nums))) {
		return 0, false
	}
	for i, n := range nums {
		if n > 255 {
			return 0, false
		}
		ipv4 += n << (8 * (3 - uint(i)))
	}
	return ipv4, true
}

// parseIPv6 is the WHATWG IPv6 parser (rust-url host.rs parse_ipv6addr).
func parseIPv6(in string) ([8]uint16, bool) {
	var pieces [8]uint16
	n := len(in)
	if n < 2 {
		return pieces, false
	}
	i, pp, compress := 0, 0, -1
	if in[0] == ':' {
		if in[1] != ':' {
			return pieces, false
		}
		i, pp, compress = 2, 1, 1
	}
	isV4 := false
	for i < n {
		if pp == 8 {
			return pieces, false
		}
		if in[i] == ':' {
			if compress >= 0 {
				return pieces, false
			}
			i++
			pp++
			compress = pp
			continue
		}
		start := i
		var value uint16
		value, i = hexPiece(in, i)
		if i < n {
			switch in[i] {
			case '.':
				if i == start || pp > 6 {
					return pieces, false
				}
				i = start
				isV4 = true
			case ':':
				i++
				if i == n {
					return pieces, false
				}
			default:
				return pieces, false
			}
		}
		if isV4 {
			break
		}
		pieces[pp] = value
		pp++
	}
	if isV4 {
		var ok bool
		if i, pp, ok = parseIPv6V4(in, i, &pieces, pp); !ok {
			return pieces, false
		}
	}
	if i < n {
		return pieces, false
	}
	return pieces, expandCompressed(&pieces, pp, compress)
}

// hexPiece reads up to four hex digits of an IPv6 piece from in[i] on: their value and where
// it stopped.
func hexPiece(in string, i int) (uint16, int) {
	var value uint16
	for end := min(len(in), i+4); i < end; i++ {
		d, ok := hexVal(in[i])
		if !ok {
			break
		}
		value = value*16 + uint16(d)
	}
	return value, i
}

// expandCompressed moves the pieces after the "::" at piece compress (-1: none) to the end of
// the address, the pp pieces read leaving zeros between; without "::", all 8 must have been
// read.
func expandCompressed(pieces *[8]uint16, pp, compress int) bool {
	if compress < 0 {
		return pp == 8
	}
	swaps := pp - compress
	pp = 7
	for swaps > 0 {
		pieces[pp], pieces[compress+swaps-1] = pieces[compress+swaps-1], pieces[pp]
		swaps--
		pp--
	}
	return true
}

// parseIPv6V4 parses the dotted IPv4 address that ends an IPv6 address, from in[i] on, into
// pieces[pp] and pieces[pp+1]; it returns where it stopped and the next piece.
func parseIPv6V4(in string, i int, pieces *[8]uint16, pp int) (int, int, bool) {
	if pp > 6 {
		return i, pp, false
	}
	n, seen := len(in), 0
	for i < n {
		if seen > 0 {
			if seen < 4 && in[i] == '.' {
				i++
			} else {
				return i, pp, false
			}
		}
		piece := -1
		for i < n && isDigit(in[i]) {
			d := int(in[i] - '0')
			switch piece {
			case -1:
				piece = d
			case 0:
				return i, pp, false
			default:
				piece = piece*10 + d
				if piece > 255 {
					return i, pp, false
				}
			}
			i++
		}
		if piece < 0 {
			return i, pp, false
		}
		pieces[pp] = pieces[pp]*0x100 + uint16(piece)
		seen++
		if seen == 2 || seen == 4 {
			pp++
		}
	}
	return i, pp, seen == 4
}

func hexVal(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// formatIPv6 serializes with the longest run (2+) of zero pieces compressed.
func formatIPv6(p [8]uint16) string {
	best, bestLen, start := -1, 0, -1
	for i := 0; i <= 8; i++ {
		if i < 8 && p[i] == 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start > bestLen {
			best, bestLen = start, i-start
		}
		start = -1
	}
	if bestLen < 2 {
		best = -1
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == best {
			b.WriteString("::")
			i += bestLen - 1
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), ":") {
			b.WriteByte(':')
		}
		b.WriteString(strconv.FormatUint(uint64(p[i]), 16))
	}
	return b.String()
}

// Percent-encode sets of the WHATWG URL standard, as rust-url defines them
// (C0 controls, DEL and non-ASCII are always encoded).
const (
	controlsSet    = ""
	fragmentSet    = " \"<>`"
	pathSet        = fragmentSet + "#?{}"
	userinfoSet    = pathSet + "/:;=@[\\]^|"
	specialQuerySt = " \"#<>'"
)

func percentEncode(s, set string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || strings.IndexByte(set, c) >= 0 {
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// percentDecode decodes %XX sequences; a '%' not followed by two hex digits
// stays as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c, ok := escapeAt(s, i); ok {
			b = append(b, c)
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// escapeAt reports whether s[i:] begins with a %XX escape (two hex digits of either case),
// and the byte it stands for. A '%' without them is no escape: decoders keep it as it is.
func escapeAt(s string, i int) (byte, bool) {
	if s[i] != '%' || i+2 >= len(s) {
		return 0, false
	}
	h, ok1 := hexVal(s[i+1])
	l, ok2 := hexVal(s[i+2])
	return byte(h<<4 | l), ok1 && ok2
}

// parsePathQueryFragment serializes the rest of a special URL: path with dot
// segments resolved and '\' read as '/', then query and fragment.
func (u *whatwgURL) parsePathQueryFragment(rest string) {
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		f := percentEncode(rest[i+1:], fragmentSet)
		u.fragment = &f
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q := percentEncode(rest[i+1:], specialQuerySt)
		u.query = &q
		rest = rest[:i]
	}
	if rest != "" && (rest[0] == '/' || rest[0] == '\\') {
		rest = rest[1:]
	}
	var segs []string
	start := 0
	for i := 0; i <= len(rest); i++ {
		if i < len(rest) && rest[i] != '/' && rest[i] != '\\' {
			continue
		}
		seg := rest[start:i]
		atEnd := i == len(rest)
		start = i + 1
		switch strings.ToLower(seg) {
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			if atEnd {
				segs = append(segs, "")
			}
		case ".", "%2e":
			if atEnd {
				segs = append(segs, "")
			}
		default:
			segs = append(segs, percentEncode(seg, pathSet))
		}
	}
	u.path = "/" + strings.Join(segs, "/")
}

// href is the URL's WHATWG serialization (pydantic's str(url)).
func (u *whatwgURL) href() string {
	var b strings.Builder
	b.WriteString(u.scheme)
	b.WriteString("://")
	if u.username != "" || u.password != "" {
		b.WriteString(u.username)
		if u.password != "" {
			b.WriteByte(':')
			b.WriteString(u.password)
		}
		b.WriteByte('@')
	}
	b.WriteString(u.host)
	if u.port != "" {
		b.WriteByte(':')
		b.WriteString(u.port)
	}
	b.WriteString(u.path)
	if u.query != nil {
		b.WriteByte('?')
		b.WriteString(*u.query)
	}
	if u.fragment != nil {
		b.WriteByte('#')
		b.WriteString(*u.fragment)
	}
	return b.String()
}

// goURL converts the parsed URL to a *url.URL.
func (u *whatwgURL) goURL() *url.URL {
	if parsed, err := url.Parse(u.href()); err == nil {
		return parsed
	}
	// The WHATWG serialization keeps '%' not followed by hex digits, which
	// net/url rejects; build the URL field by field instead.
	out := &url.URL{Scheme: u.scheme, Host: u.host, Path: lenientUnescape(u.path), RawPath: u.path}
	if u.port != "" {
		out.Host += ":" + u.port
	}
	if u.username != "" || u.password != "" {
		if u.password != "" {
			out.User = url.UserPassword(lenientUnescape(u.username), lenientUnescape(u.password))
		} else {
			out.User = url.User(lenientUnescape(u.username))
		}
	}
	if u.query != nil {
		out.RawQuery = *u.query
		out.ForceQuery = *u.query == ""
	}
	if u.fragment != nil {
		out.Fragment = lenientUnescape(*u.fragment)
		out.RawFragment = *u.fragment
	}
	return out
}

func lenientUnescape(s string) string {
	if v, err := url.PathUnescape(s); err == nil {
		return v
	}
	return percentDecode(s)
}

package validate

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// validateStr is pydantic-core's lax str validation of a Python value
// (input_python.rs validate_str): str passes, bytes are decoded as UTF-8,
// anything else is string_type.
func validateStr(loc Loc, in any) (string, *Item) {
	switch x := in.(type) {
	case pyStr:
		return toValidUTF8(string(x)), nil
	case string:
		return x, nil
	case pyBytes:
		if utf8.ValidString(string(x)) {
			return string(x), nil
		}
		it := typeItem("string_unicode", loc, in)
		return "", &it
	}
	it := typeItem("string_type", loc, in)
	return "", &it
}

// unicodeItem is pydantic-core's refusal of a str it cannot turn into Rust's UTF-8 (one
// holding a lone surrogate: to_str fails), which every validator that reads the text makes
// before anything else — all but str's own, which keeps the Python str as it is, and
// Decimal's, which hands the str to Python's decimal constructor (decisions D19). It returns
// nil for any other input.
func unicodeItem(loc Loc, in any) *Item {
	if s, ok := in.(pyStr); ok && !utf8.ValidString(string(s)) {
		it := typeItem("string_unicode", loc, in)
		return &it
	}
	return nil
}

// validateChoice is a str Enum (typ "enum") or Literal (typ
// "literal_error") of string values: only an equal str matches.
func validateChoice(typ string, loc Loc, in any, values []string) (string, *Item) {
	if it := unicodeItem(loc, in); it != nil {
		return "", it
	}
	var s string
	switch x := in.(type) {
	case pyStr:
		s = string(x)
	case string:
		s = x
	default:
		it := expectedItem(typ, loc, in, expectedRepr(values))
		return "", &it
	}
	for _, v := range values {
		if s == v {
			return v, nil
		}
	}
	it := expectedItem(typ, loc, in, expectedRepr(values))
	return "", &it
}

// expectedRepr is pydantic-core's expected_repr_name
// (src/validators/literal.rs): the values' Python reprs joined by ", " with
// " or " before the last.
func expectedRepr(values []string) string {
	reprs := make([]string, len(values))
	for i, v := range values {
		reprs[i] = pyStrRepr(v)
	}
	switch len(reprs) {
	case 0:
		return ""
	case 1:
		return reprs[0]
	}
	return strings.Join(reprs[:len(reprs)-1], ", ") + " or " + reprs[len(reprs)-1]
}

// Bound is a numeric constraint of an int or Decimal field or parameter
// (Query(ge=1, le=100), Field(gt=0)).
type Bound struct {
	op string // "le", "ge", "gt"
	n  int
}

// Ge is the constraint ge=n (greater_than_equal).
func Ge(n int) Bound { return Bound{"ge", n} }

// Gt is the constraint gt=n (greater_than).
func Gt(n int) Bound { return Bound{"gt", n} }

// Le is the constraint le=n (less_than_equal).
func Le(n int) Bound { return Bound{"le", n} }

// checkBounds returns the item for the first violated bound, given the
// comparison cmp(n) of the value with n (-1, 0, +1). pydantic-core checks
// le, lt, ge, gt in that order (src/validators/int.rs, decimal.rs) and
// reports only the first violated one; no parameter of the spec has lt.
func checkBounds(loc Loc, in any, bounds []Bound, cmp func(n int) int) *Item {
	for _, op := range [...]string{"le", "ge", "gt"} {
		for _, b := range bounds {
			if b.op != op {
				continue
			}
			c := cmp(b.n)
			var typ, text string
			switch op {
			case "le":
				typ, text = "less_than_equal", "less than or equal to"
				if c <= 0 {
					continue
				}
			case "ge":
				typ, text = "greater_than_equal", "greater than or equal to"
				if c >= 0 {
					continue
				}
			case "gt":
				typ, text = "greater_than", "greater than"
				if c > 0 {
					continue
				}
			}
			return &Item{Type: typ, Loc: loc, Msg: "Input should be " + text + " " + strconv.Itoa(b.n),
				Input: in, Ctx: []CtxPair{{op, b.n}}}
		}
	}
	return nil
}

// validateInt is pydantic-core's lax int validation
// (input_python.rs validate_int) followed by the constraints.
func validateInt(loc Loc, in any, bounds []Bound) (*big.Int, *Item) {
	if it := unicodeItem(loc, in); it != nil {
		return nil, it
	}
	var n *big.Int
	typ := ""
	switch x := in.(type) {
	case pyInt:
		n, _ = new(big.Int).SetString(string(x), 10)
	case bool:
		n = big.NewInt(0)
		if x {
			n.SetInt64(1)
		}
	case pyStr:
		n, typ = strAsInt(string(x))
	case string:
		n, typ = strAsInt(x)
	case pyBytes:
		if utf8.ValidString(string(x)) {
			n, typ = strAsInt(string(x))
		} else {
			typ = "int_parsing"
		}
	case float64:
		n, typ = floatAsInt(x)
	default:
		typ = "int_type"
	}
	if typ != "" {
		it := typeItem(typ, loc, in)
		return nil, &it
	}
	if it := checkBounds(loc, in, bounds, func(b int) int { return n.Cmp(big.NewInt(int64(b))) }); it != nil {
		return nil, it
	}
	return n, nil
}

// saturate converts n to int, clamping values outside its range.
func saturate(n *big.Int) int {
	if n.IsInt64() {
		v := n.Int64()
		if v > math.MaxInt {
			return math.MaxInt
		}
		if v < math.MinInt {
			return math.MinInt
		}
		return int(v)
	}
	if n.Sign() > 0 {
		return math.MaxInt
	}
	return math.MinInt
}

// floatAsInt is pydantic-core's float_as_int (src/input/shared.rs).
func floatAsInt(f float64) (*big.Int, string) {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return nil, "finite_number"
	case math.Mod(f, 1) != 0:
		return nil, "int_from_float"
	case f > -9223372036854775808.0 && f < 9223372036854775808.0:
		return big.NewInt(int64(f)), ""
	}
	return nil, "int_parsing_size"
}

// strAsInt is pydantic-core's str_as_int (src/input/shared.rs): the string
// as a JSON integer (jiter's NumberInt grammar), else cleaned by
// clean_int_str (whitespace, a leading '+', leading zeros, a ".0+" suffix,
// '_' separators) and parsed again. "1." and "2.5" fail.
func strAsInt(s string) (*big.Int, string) {
	n, ok, tooLong := jsonInt(s)
	if ok {
		return n, ""
	}
	if tooLong {
		return nil, "int_parsing_size"
	}
	if cleaned, ok := cleanIntStr(s); ok {
		if n, ok, _ := jsonInt(cleaned); ok {
			return n, ""
		}
	}
	return nil, "int_parsing"
}

// jsonInt is jiter's NumberInt::from_bytes: -?(0|[1-9][0-9]*) and nothing
// else. tooLong reports jiter's NumberOutOfRange: a run of sign and digits
// longer than 4300 characters, checked before anything that follows it.
func jsonInt(s string) (n *big.Int, ok, tooLong bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return nil, false, false
	}
	switch {
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i > 4300 {
			return nil, false, true
		}
	default:
		return nil, false, false
	}
	if i != len(s) {
		return nil, false, false
	}
	n, _ = new(big.Int).SetString(s, 10)
	return n, true, false
}

// cleanIntStr is pydantic-core's clean_int_str; ok is false when the string
// cannot be an integer or cleaning changed nothing.
func cleanIntStr(s string) (string, bool) {
	lenBefore := len(s)
	s = strings.TrimFunc(s, unicode.IsSpace) // Rust's str::trim (White_Space)
	if rest, found := strings.CutPrefix(s, "+"); found {
		if strings.HasPrefix(rest, "-") {
			return "", false
		}
		s = rest
	}
	negative := false
	if rest, found := strings.CutPrefix(s, "-"); found {
		if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
			return "", false
		}
		negative = true
		s = rest
	}
	s, ok := stripLeadingZeros(s)
	if !ok {
		return "", false
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		dec := s[i+1:]
		if dec != "" && strings.Trim(dec, "0") == "" {
			s = s[:i]
		}
	}
	sign := ""
	if negative {
		sign = "-"
	}
	if stripped, ok := stripUnderscores(s); ok {
		return sign + stripped, true
	}
	if lenBefore == len(s) {
		return "", false
	}
	return sign + s, true
}

// stripLeadingZeros is pydantic-core's strip_leading_zeros.
func stripLeadingZeros(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	switch c := s[0]; {
	case c == '0':
	case (c >= '1' && c <= '9') || c == '-':
		return s, true
	default:
		return "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '0' || c == '_':
		case (c >= '1' && c <= '9') || c == '-':
			return s[i:], true
		case c == '.':
			return s[i-1:], true
		default:
			return "", false
		}
	}
	return s[len(s)-1:], true
}

// stripUnderscores is pydantic-core's strip_underscores.
func stripUnderscores(s string) (string, bool) {
	if strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || !strings.Contains(s, "_") || strings.Contains(s, "__") {
		return "", false
	}
	return strings.ReplaceAll(s, "_", ""), true
}

// validateBool is pydantic-core's lax bool validation
// (input_python.rs validate_bool).
func validateBool(loc Loc, in any) (bool, *Item) {
	if it := unicodeItem(loc, in); it != nil {
		return false, it
	}
	typ := "bool_type"
	switch x := in.(type) {
	case bool:
		return x, nil
	case pyStr:
		if b, ok := strAsBool(string(x)); ok {
			return b, nil
		}
		typ = "bool_parsing"
	case string:
		if b, ok := strAsBool(x); ok {
			return b, nil
		}
		typ = "bool_parsing"
	case pyBytes:
		if b, ok := strAsBool(string(x)); ok && utf8.ValidString(string(x)) {
			return b, nil
		}
		typ = "bool_parsing"
	case pyInt:
		n, _ := new(big.Int).SetString(string(x), 10)
		if n.IsInt64() {
			switch n.Int64() {
			case 0:
				return false, nil
			case 1:
				return true, nil
			}
			typ = "bool_parsing"
		}
		// Larger ints go through float(), then float_as_int fails: bool_type.
	case float64:
		if n, t := floatAsInt(x); t == "" {
			switch {
			case n.Sign() == 0:
				return false, nil
			case n.IsInt64() && n.Int64() == 1:
				return true, nil
			}
			typ = "bool_parsing"
		}
	}
	it := typeItem(typ, loc, in)
	return false, &it
}

// strAsBool is pydantic-core's str_as_bool.
func strAsBool(s string) (value, ok bool) {
	switch {
	case s == "0" || strings.EqualFold(s, "f") || strings.EqualFold(s, "n") || strings.EqualFold(s, "no") ||
		strings.EqualFold(s, "off") || strings.EqualFold(s, "false"):
		return false, asciiFold(s)
	case s == "1" || strings.EqualFold(s, "t") || strings.EqualFold(s, "y") || strings.EqualFold(s, "on") ||
		strings.EqualFold(s, "yes") || strings.EqualFold(s, "true"):
		return true, asciiFold(s)
	}
	return false, false
}

// asciiFold guards strings.EqualFold, which also folds the Kelvin sign and
// the long s; Rust's eq_ignore_ascii_case does not.
func asciiFold(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

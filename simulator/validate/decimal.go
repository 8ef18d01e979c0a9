package validate

import (
	"math"
	"math/big"
	"strings"
	"unicode"

	"github.com/shopspring/decimal"
)

// validateDecimal is pydantic-core's lax Decimal validation
// (input_python.rs validate_decimal, validators/decimal.rs): str and int go
// to Decimal(x), float to Decimal(str(x)), anything else (bool included) is
// decimal_type; a string Python's Decimal rejects is decimal_parsing;
// NaN and infinities are finite_number (allow_inf_nan defaults to false);
// then the constraints in le, lt, ge, gt order.
func validateDecimal(loc Loc, in any, bounds []Bound) (decimal.Decimal, *Item) {
	var d pyDecimal
	ok := true
	switch x := in.(type) {
	case pyStr:
		d, ok = parsePyDecimal(toValidUTF8(string(x)))
	case string:
		d, ok = parsePyDecimal(x)
	case pyInt:
		d.coef, _ = new(big.Int).SetString(string(x), 10)
	case float64:
		switch {
		case math.IsNaN(x):
			d.special = "nan"
		case math.IsInf(x, 0):
			d.special = "inf"
		default:
			d, ok = parsePyDecimal(pyFloatRepr(x))
		}
	default:
		it := typeItem("decimal_type", loc, in)
		return decimal.Decimal{}, &it
	}
	if !ok {
		it := typeItem("decimal_parsing", loc, in)
		return decimal.Decimal{}, &it
	}
	if d.special != "" {
		it := typeItem("finite_number", loc, in)
		return decimal.Decimal{}, &it
	}
	if d.coef.Sign() == 0 {
		d.exp = 0
	}
	if adj := d.exp + int64(len(new(big.Int).Abs(d.coef).String())) - 1; d.coef.Sign() != 0 && (adj > maxDecimalAdjExp || adj < -maxDecimalAdjExp) {
		// Python accepts any exponent here (the exact conversion uses a
		// maximal context), but no arithmetic on such a value can succeed
		// in its default context (Emax 999999), and shopspring would try
		// to materialise 10^exp. Reported as unparsable instead.
		it := typeItem("decimal_parsing", loc, in)
		return decimal.Decimal{}, &it
	}
	if it := checkBounds(loc, in, bounds, func(b int) int { return cmpDecimalInt(d.coef, d.exp, b) }); it != nil {
		return decimal.Decimal{}, it
	}
	val := decimal.NewFromBigInt(d.coef, int32(d.exp))
	return val, nil
}

// maxDecimalAdjExp is Python's default decimal context Emax (and -Emin).
const maxDecimalAdjExp = 999999

// cmpDecimalInt compares coef×10^exp with n without materialising huge
// powers of ten.
func cmpDecimalInt(coef *big.Int, exp int64, n int) int {
	bn := big.NewInt(int64(n))
	if coef.Sign() != bn.Sign() || coef.Sign() == 0 {
		return cmpInt(coef.Sign(), bn.Sign())
	}
	digits := int64(len(new(big.Int).Abs(coef).String()))
	// |coef×10^exp| has digits+exp integer digits; |n| has at most 19.
	if digits+exp > 21 {
		return coef.Sign()
	}
	if digits+exp < -1 {
		return -coef.Sign()
	}
	l, r := new(big.Int).Set(coef), bn
	if exp >= 0 {
		l.Mul(l, new(big.Int).Exp(big.NewInt(10), big.NewInt(exp), nil))
	} else {
		r = new(big.Int).Mul(bn, new(big.Int).Exp(big.NewInt(10), big.NewInt(-exp), nil))
	}
	return l.Cmp(r)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pyDecimal is a parsed Python Decimal: coef × 10^exp, or a special value.
type pyDecimal struct {
	coef    *big.Int
	exp     int64
	special string // "nan", "snan", "inf" or ""
}

// parsePyDecimal is Python's Decimal(str) (Modules/_decimal: numeric_as_ascii
// with whitespace stripped and every '_' removed, Unicode decimal digits
// mapped to ASCII, then the decimal string grammar with exact conversion):
//
//	[sign] (digits ['.' [digits]] | '.' digits) [('e'|'E') [sign] digits]
//	[sign] ('Inf' | 'Infinity')          case-insensitive
//	[sign] ('NaN' | 'sNaN') [digits]     case-insensitive
func parsePyDecimal(s string) (pyDecimal, bool) {
	t, ok := numericASCII(s)
	if !ok {
		return pyDecimal{}, false
	}
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	lower := strings.ToLower(t)
	switch {
	case lower == "inf" || lower == "infinity":
		return pyDecimal{special: "inf"}, true
	case strings.HasPrefix(lower, "nan") && allDigits(lower[3:]):
		return pyDecimal{special: "nan"}, true
	case strings.HasPrefix(lower, "snan") && allDigits(lower[4:]):
		return pyDecimal{special: "snan"}, true
	}
	i := digitsEnd(t, 0)
	intDigits, fracDigits := t[:i], ""
	if i < len(t) && t[i] == '.' {
		fs := i + 1
		i = digitsEnd(t, fs)
		fracDigits = t[fs:i]
	}
	if intDigits == "" && fracDigits == "" {
		return pyDecimal{}, false
	}
	var exp int64
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		es := i
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		ds := i
		if i = digitsEnd(t, ds); ds == i {
			return pyDecimal{}, false
		}
		e, ok := new(big.Int).SetString(t[es:i], 10)
		if !ok || !e.IsInt64() || e.Int64() > 1<<62 || e.Int64() < -(1<<62) {
			exp = math.MaxInt64 // beyond any representable exponent
		} else {
			exp = e.Int64()
		}
	}
	if i != len(t) {
		return pyDecimal{}, false
	}
	coef, _ := new(big.Int).SetString(intDigits+fracDigits, 10)
	if neg {
		coef.Neg(coef)
	}
	if exp != math.MaxInt64 {
		exp -= int64(len(fracDigits))
	}
	return pyDecimal{coef: coef, exp: exp}, true
}

// numericASCII is _decimal's numeric_as_ascii: s with Python whitespace stripped at both ends,
// every '_' removed, other whitespace as ' ' and Unicode decimal digits as ASCII ones; false
// for any other non-ASCII character.
func numericASCII(s string) (string, bool) {
	s = strings.TrimFunc(s, isPySpace)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '_':
			continue
		case r > 0 && r < 128:
			b.WriteRune(r)
		case isPySpace(r):
			b.WriteByte(' ')
		case unicode.IsDigit(r):
			b.WriteByte(byte('0' + digitValue(r)))
		default:
			return "", false
		}
	}
	return b.String(), true
}

// digitsEnd is where the run of ASCII digits from t[i] on ends.
func digitsEnd(t string, i int) int {
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	return i
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// digitValue is Py_UNICODE_TODECIMAL for a Unicode decimal digit (category
// Nd): digits come in whole runs of ten, each starting at its zero, some
// runs adjacent to others.
func digitValue(r rune) int {
	zero := r
	for zero > 0 && unicode.IsDigit(zero-1) {
		zero--
	}
	return int(r-zero) % 10
}

package launch

import (
	"errors"
	"fmt"
	"strings"
)

// Variables in a profile's command, env values and models_dir:
//
//	${NAME}  the value of environment variable NAME (an error if unset)
//	$NAME    the same, NAME being letters, digits and _ not starting with
//	         a digit
//	$$       a literal $
//
// Any other $ is an error that says to write $$: a profile cannot mean
// "$1" or "$(cmd)", since no shell ever runs it.

// expansion is one profile string after expand.
type expansion struct {
	// Value is the string the server gets.
	Value string
	// Shown is what launch --dry-run prints: Value with the values of
	// secret-looking variables (secretName) replaced by <redacted>.
	Shown string
	// Secrets are the values substituted from secret-looking variables.
	Secrets []string
}

// errLoneDollar is the error of a $ that starts no variable.
var errLoneDollar = errors.New(`a "$" that starts no variable name (write $$ for a literal $)`)

// expand replaces the variables of s (see above) through lookup. The
// error names the variable or the column of the bad $.
func expand(s string, lookup func(string) (string, bool)) (expansion, error) {
	var val, shown strings.Builder
	var out expansion
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			val.WriteByte(c)
			shown.WriteByte(c)
			i++
			continue
		}
		name, n, err := varName(s[i:])
		if err != nil {
			return out, fmt.Errorf("column %d: %w", i+1, err)
		}
		if name == "$" {
			val.WriteByte('$')
			shown.WriteByte('$')
			i += n
			continue
		}
		v, ok := lookup(name)
		if !ok {
			return out, fmt.Errorf("environment variable %s is not set", name)
		}
		val.WriteString(v)
		if secretName.MatchString(name) && v != "" {
			shown.WriteString(redacted)
			out.Secrets = append(out.Secrets, v)
		} else {
			shown.WriteString(v)
		}
		i += n
	}
	out.Value, out.Shown = val.String(), shown.String()
	return out, nil
}

// varName reads the variable that s (starting with $) names and how many
// bytes it takes: "$" for $$.
func varName(s string) (name string, n int, err error) {
	if len(s) < 2 {
		return "", 0, errLoneDollar
	}
	switch c := s[1]; {
	case c == '$':
		return "$", 2, nil
	case c == '{':
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", 0, errors.New(`"${" without its "}"`)
		}
		name = s[2:end]
		if !validName(name) {
			return "", 0, fmt.Errorf("${%s}: not a variable name (letters, digits and _, not starting with a digit)", name)
		}
		return name, end + 1, nil
	case isNameStart(c):
		n = 2
		for n < len(s) && isNameByte(s[n]) {
			n++
		}
		return s[1:n], n, nil
	}
	return "", 0, errLoneDollar
}

func validName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool { return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
func isNameByte(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultTools are the agent's tools: calculator and clock.
func DefaultTools() []Tool {
	return []Tool{
		{
			Name:        "calculator",
			Description: "Evaluate an arithmetic expression with + - * / ^, parentheses and decimal numbers, e.g. (2 + 3) * 4.5",
			Parameters: map[string]any{"type": "object", "required": []any{"expression"}, "properties": map[string]any{
				"expression": map[string]any{"type": "string", "description": "the expression to evaluate"}}},
			Run: func(_ context.Context, args map[string]any) (string, error) {
				expr, _ := args["expression"].(string)
				v, err := Calculate(expr)
				if err != nil {
					return "", err
				}
				return strconv.FormatFloat(v, 'g', -1, 64), nil
			},
		},
		{
			Name:        "clock",
			Description: "The current date and time, in an IANA time zone (default UTC)",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{
				"timezone": map[string]any{"type": "string", "description": "IANA zone such as Europe/Paris"}}},
			Run: func(_ context.Context, args map[string]any) (string, error) {
				tz, _ := args["timezone"].(string)
				if tz == "" {
					tz = "UTC"
				}
				loc, err := time.LoadLocation(tz)
				if err != nil {
					return "", fmt.Errorf("unknown time zone %q", tz)
				}
				return time.Now().In(loc).Format("Monday 2 January 2006, 15:04:05 MST"), nil
			},
		},
	}
}

// Calculate evaluates an arithmetic expression: numbers, + - * / ^ (power,
// right-associative), unary minus and parentheses, with the usual
// precedence.
func Calculate(expr string) (float64, error) {
	p := &calc{s: expr}
	if strings.TrimSpace(expr) == "" {
		return 0, fmt.Errorf("empty expression")
	}
	v, err := p.sum()
	if err != nil {
		return 0, err
	}
	if p.peek() != 0 {
		return 0, fmt.Errorf("unexpected %q at position %d", p.s[p.i], p.i)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("the result is not a finite number")
	}
	return v, nil
}

type calc struct {
	s string
	i int
}

// peek skips blanks and returns the next byte (0 at the end).
func (p *calc) peek() byte {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *calc) sum() (float64, error) {
	v, err := p.product()
	for err == nil && (p.peek() == '+' || p.peek() == '-') {
		op := p.s[p.i]
		p.i++
		var r float64
		if r, err = p.product(); op == '+' {
			v += r
		} else {
			v -= r
		}
	}
	return v, err
}

func (p *calc) product() (float64, error) {
	v, err := p.power()
	for err == nil && (p.peek() == '*' || p.peek() == '/') {
		op := p.s[p.i]
		p.i++
		var r float64
		if r, err = p.power(); op == '*' {
			v *= r
		} else {
			v /= r
		}
	}
	return v, err
}

func (p *calc) power() (float64, error) {
	base, err := p.unary()
	if err != nil || p.peek() != '^' {
		return base, err
	}
	p.i++
	exp, err := p.power()
	return math.Pow(base, exp), err
}

func (p *calc) unary() (float64, error) {
	if p.peek() == '-' {
		p.i++
		v, err := p.unary()
		return -v, err
	}
	if p.peek() == '(' {
		p.i++
		v, err := p.sum()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, fmt.Errorf("missing ) at position %d", p.i)
		}
		p.i++
		return v, nil
	}
	p.peek()
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.') {
		p.i++
	}
	if start == p.i {
		if p.i >= len(p.s) {
			return 0, fmt.Errorf("unexpected end of expression")
		}
		return 0, fmt.Errorf("unexpected %q at position %d", p.s[p.i], p.i)
	}
	return strconv.ParseFloat(p.s[start:p.i], 64)
}

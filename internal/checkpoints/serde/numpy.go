package serde

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
)

// maxNumpyDims is numpy's own limit on array dimensions.
const maxNumpyDims = 64

// numpy converts an EXT_NUMPY_ARRAY payload [dtype, shape, order, buffer] to
// nested arrays (as ndarray.tolist() would), or, for dtypes without a JSON
// equivalent, to {"dtype", "shape", "order", "data": base64}.
func numpy(s *decoder) (any, error) {
	head, err := s.take(1)
	if err != nil {
		return nil, err
	}
	if head[0] != 0x94 { // fixarray of 4 elements
		return nil, s.payloadErrorf(ExtNumpyArray, "not a 4-element array")
	}
	dtypeV, err := s.value()
	if err != nil {
		return nil, err
	}
	shapeV, err := s.value()
	if err != nil {
		return nil, err
	}
	orderV, err := s.value()
	if err != nil {
		return nil, err
	}
	buf, err := s.bin()
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	dtype, ok1 := dtypeV.(string)
	shapeA, ok2 := shapeV.([]any)
	order, ok3 := orderV.(string)
	if !ok1 || !ok2 || !ok3 || (order != "C" && order != "F") {
		return nil, s.payloadErrorf(ExtNumpyArray, "not [dtype, shape, order, buffer]")
	}
	shape, ok := ints(shapeA)
	if !ok || len(shape) > maxNumpyDims {
		return nil, s.payloadErrorf(ExtNumpyArray, "shape %v", shapeV)
	}
	elem, size, ok := numpyElem(dtype)
	if !ok {
		return map[string]any{
			"dtype": dtype,
			"shape": shapeV,
			"order": order,
			"data":  base64.StdEncoding.EncodeToString(buf),
		}, nil
	}

	// Count elements and the arrays tolist() would build, refusing shapes
	// that do not match the buffer or would allocate far beyond it.
	limit := int64(len(buf)) + 1<<16
	count, containers := int64(1), int64(1)
	for i, n := range shape {
		if n < 0 || (n > 0 && count > limit/n) {
			return nil, s.payloadErrorf(ExtNumpyArray, "shape %v too large for %d bytes", shape, len(buf))
		}
		count *= n
		if i < len(shape)-1 {
			containers += count
			if containers > limit {
				return nil, s.payloadErrorf(ExtNumpyArray, "shape %v too large for %d bytes", shape, len(buf))
			}
		}
	}
	if count*int64(size) != int64(len(buf)) {
		return nil, s.payloadErrorf(ExtNumpyArray, "%s shape %v needs %d bytes, buffer has %d", dtype, shape, count*int64(size), len(buf))
	}

	strides := make([]int64, len(shape))
	stride := int64(1)
	for k := range shape {
		i := k
		if order == "C" {
			i = len(shape) - 1 - k
		}
		strides[i] = stride
		stride *= shape[i]
	}
	var build func(dim int, off int64) any
	build = func(dim int, off int64) any {
		if dim == len(shape) {
			return elem(buf[off*int64(size) : (off+1)*int64(size)])
		}
		a := make([]any, shape[dim])
		for j := range a {
			a[j] = build(dim+1, off+int64(j)*strides[dim])
		}
		return a
	}
	return build(0, 0), nil
}

// numpyElem returns a converter for one element of a numpy dtype string
// such as "<f8", "|b1" or ">u2", and the element size in bytes.
func numpyElem(dtype string) (func([]byte) any, int, bool) {
	if len(dtype) < 3 {
		return nil, 0, false
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch dtype[0] {
	case '<', '|', '=':
	case '>':
		order = binary.BigEndian
	default:
		return nil, 0, false
	}
	size, err := strconv.Atoi(dtype[2:])
	if err != nil {
		return nil, 0, false
	}
	u := func(b []byte) uint64 {
		switch len(b) {
		case 1:
			return uint64(b[0])
		case 2:
			return uint64(order.Uint16(b))
		case 4:
			return uint64(order.Uint32(b))
		default:
			return order.Uint64(b)
		}
	}
	switch kind := dtype[1]; {
	case kind == 'b' && size == 1:
		return func(b []byte) any { return b[0] != 0 }, size, true
	case kind == 'u' && (size == 1 || size == 2 || size == 4 || size == 8):
		return func(b []byte) any { return json.Number(strconv.FormatUint(u(b), 10)) }, size, true
	case kind == 'i' && (size == 1 || size == 2 || size == 4 || size == 8):
		shift := 64 - 8*size
		return func(b []byte) any { return intNumber(int64(u(b)<<shift) >> shift) }, size, true
	case kind == 'f' && size == 2:
		return func(b []byte) any { return floatValue(halfToFloat(uint16(u(b)))) }, size, true
	case kind == 'f' && size == 4:
		return func(b []byte) any { return floatValue(float64(math.Float32frombits(uint32(u(b))))) }, size, true
	case kind == 'f' && size == 8:
		return func(b []byte) any { return floatValue(math.Float64frombits(u(b))) }, size, true
	}
	return nil, 0, false
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

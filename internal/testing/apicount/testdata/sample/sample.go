package sample

const C = 1

var V, v = 1, 2

type T struct{ Field int }

type A = T

type t struct{}

type I interface {
	M()
	m()
}

func F() {}

func f() {}

func (T) Exported()  {}
func (T) hidden()    {}
func (t) Exported2() {}

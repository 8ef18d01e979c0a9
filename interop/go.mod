module partnersim/interop

go 1.26

replace partnersim => ../

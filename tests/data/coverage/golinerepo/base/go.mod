module example.com/golinerepo

go 1.19

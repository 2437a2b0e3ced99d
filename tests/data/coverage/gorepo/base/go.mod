module example.com/gorepo

go 1.19

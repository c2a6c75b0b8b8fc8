module stampede/apps/go

go 1.22

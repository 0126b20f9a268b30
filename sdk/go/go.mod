module github.com/atrium-hq/atrium/sdk/go

go 1.26.0

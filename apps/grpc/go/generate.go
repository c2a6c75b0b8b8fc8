// Code generation from the one declaration of the API,
// contracts/grpc/bench.proto, into benchpb/ (not committed: derived, so it
// cannot drift from the .proto). protoc comes from Debian (scripts/deps.sh
// installs protobuf-compiler); the two plugins are this module's pinned
// tools (go.mod `tool`), built from the Go module proxy, so the generated
// code always matches the grpc-go and protobuf versions it compiles against.
//
//	go generate && go build -o server .
package main

//go:generate go build -o bin/ google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc
//go:generate protoc -I ../../../contracts/grpc --plugin=protoc-gen-go=bin/protoc-gen-go --plugin=protoc-gen-go-grpc=bin/protoc-gen-go-grpc --go_out=. --go_opt=module=stampede/apps/grpc/go --go-grpc_out=. --go-grpc_opt=module=stampede/apps/grpc/go bench.proto

// A crossing cheaper than what the test backend saves keeps the three kernels; the explain
// table shows what the two crossings cost, and the JSON report the transitions option.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:2,test:1" transitions="fixed:0.25" explain-table="%t.txt" explain="%t.json"}' | filecheck %s --check-prefix=CHEAP
// RUN: filecheck %s --check-prefix=CHEAP-TABLE < %t.txt
// RUN: filecheck %s --check-prefix=CHEAP-JSON < %t.json

// CHEAP:      collage.kernel "test"(%x)
// CHEAP:      collage.kernel "tvm"(%a)
// CHEAP:      collage.kernel "test"(%b)

// CHEAP-TABLE: @chain: 3 kernels, total 4.5 s
// CHEAP-TABLE-NEXT: estimated run 4.5 s: kernels 4 s, launches 0 s, crossings 500 ms, base 0 s

// CHEAP-JSON: "transitions": {
// CHEAP-JSON-NEXT: "fixed": 0.25
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// collage-refine keeps the partition as it is: with budget=0 it does nothing and says
// nothing; without a handover price (no mock-transfer) the start plan is the fastest and
// stays exactly as it was, costs included (never worse than the start). With a handover
// price refinement moves the chain to tvm: mock_scorer.mlir.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" estimator=mock mock-costs="tvm:1,test:0.5"},collage-refine{backends=tvm,test backend-options="test: ops=relu" budget=0 scorer=mock mock-costs="tvm:1,test:0.5" mock-transfer=2}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" estimator=mock mock-costs="tvm:1,test:0.5"},collage-refine{backends=tvm,test backend-options="test: ops=relu" budget=10 scorer=mock mock-costs="tvm:1,test:0.5"}' 2>/dev/null | filecheck %s --check-prefix=KEEP

// OFF-NOT:     collage-refine
// OFF-LABEL:   func.func @chain
// OFF-NEXT:      %a = collage.kernel "test"(%x) {label = "relu", cost = 5.000000e-01 : f64}
// OFF:           %b = collage.kernel "tvm"(%a) {label = "sigmoid", cost = 1.000000e+00 : f64}
// OFF:           %c = collage.kernel "test"(%b) {label = "relu", cost = 5.000000e-01 : f64}

// KEEP-LABEL:  func.func @chain
// KEEP-NEXT:     %a = collage.kernel "test"(%x) {label = "relu", cost = 5.000000e-01 : f64}
// KEEP:          %b = collage.kernel "tvm"(%a) {label = "sigmoid", cost = 1.000000e+00 : f64}
// KEEP:          %c = collage.kernel "test"(%b) {label = "relu", cost = 5.000000e-01 : f64}
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

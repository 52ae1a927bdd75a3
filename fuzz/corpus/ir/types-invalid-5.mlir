!t = !sluice.tensor<[i=4], i32>

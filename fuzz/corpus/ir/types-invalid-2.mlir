!t = !sluice.tensor<[i=-3], f32>

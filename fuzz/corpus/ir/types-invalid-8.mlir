!t = !sluice.tensor<[i=x], f32>

!t = !sluice.tensor<i=4, f32>

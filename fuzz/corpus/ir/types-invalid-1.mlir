!t = !sluice.tensor<[j=4, i=0], f32>

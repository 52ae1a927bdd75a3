!t = !sluice.tensor<[i=99999999999999999999], f32>

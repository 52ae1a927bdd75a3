!t = !sluice.tensor<[""=4], f32>

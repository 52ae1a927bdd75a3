// Parse errors.

!t = !sluice.tensor<[i], f32>

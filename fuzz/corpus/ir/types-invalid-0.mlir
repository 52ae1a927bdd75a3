// Every diagnostic of !sluice.tensor (SluiceTypes.cpp).

!t = !sluice.tensor<[j=4, i=8, j=4], f32>
